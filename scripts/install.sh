#!/usr/bin/env bash
# Install the Atmosphere Matter Bridge as an appliance on Raspberry Pi OS (64-bit) or
# any Debian-based systemd machine: Debian packages, system users, the two virtual
# environments (bridge, Matter controller), the systemd units, the kernel settings for
# Thread and a starting configuration.
#
# Safe to run again: every step compares what is there with what it would write and
# only touches what differs; a second run reports "0 changed". The configuration in
# /etc/atmosphere-bridge is written once and never overwritten.
#
#   sudo scripts/install.sh [--interface eth0]
#
# --root DIR stages the whole install under DIR (like DESTDIR) for tests and image
# builds; --offline skips everything that needs the network (apt and pip) and leaves
# the venvs empty.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="/"
PREFIX="/opt/atmosphere-bridge"
PYTHON=""
INTERFACE=""
SKIP_PACKAGES=0
OFFLINE=0
START=1
OTBR_DROPIN="auto"
MATTER_SERVER_SPEC="python-matter-server[server]==8.1.2"
APT_PACKAGES=(python3 python3-venv libnl-3-200 libnl-route-3-200 iproute2 systemd)

usage() {
    cat <<EOF
usage: install.sh [options]
  --root DIR          install under DIR instead of / (staging and tests; nothing is started)
  --prefix DIR        where the venvs and docs go (default $PREFIX)
  --python PATH       Python >= 3.12 for the venvs (default: python3.13, python3.12, python3)
  --interface IF      LAN interface for the IPv6 sysctl settings (default: the default route's)
  --skip-packages     do not install Debian packages
  --offline           no network at all: implies --skip-packages, creates the venvs
                      without pip and installs nothing into them
  --otbr-dropin       treat otbr-agent as running here even if otbr-agent.service is
                      absent: install its drop-in and set accept_ra=2 (it forwards)
  --no-otbr-dropin    treat otbr-agent as not running here (default: look for its unit)
  --no-start          enable the units but do not (re)start them
  -h, --help          this text
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT="${2:?--root needs a directory}"; shift 2 ;;
        --prefix) PREFIX="${2:?--prefix needs a directory}"; shift 2 ;;
        --python) PYTHON="${2:?--python needs a path}"; shift 2 ;;
        --interface) INTERFACE="${2:?--interface needs a name}"; shift 2 ;;
        --skip-packages) SKIP_PACKAGES=1; shift ;;
        --offline) OFFLINE=1; SKIP_PACKAGES=1; shift ;;
        --otbr-dropin) OTBR_DROPIN="yes"; shift ;;
        --no-otbr-dropin) OTBR_DROPIN="no"; shift ;;
        --no-start) START=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done

ROOT="$(cd "$ROOT" 2>/dev/null && pwd)" || { echo "install.sh: --root directory does not exist" >&2; exit 2; }
[ "$ROOT" = "/" ] && R="" || R="$ROOT"
case "$PREFIX" in /*) ;; *) echo "install.sh: --prefix must be absolute" >&2; exit 2 ;; esac

CHANGED=0
UNCHANGED=0
UNITS_CHANGED=0
SERVICES_CHANGED=0
SYSCTL_CHANGED=0

say() { printf '%s\n' "$*"; }
changed() { CHANGED=$((CHANGED + 1)); say "  changed    $*"; }
unchanged() { UNCHANGED=$((UNCHANGED + 1)); say "  unchanged  $*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

if [ -z "$R" ] && [ "$(id -u)" != 0 ]; then
    die "installing into / needs root: run it with sudo (or use --root DIR to stage)"
fi

# uid/gid of a name inside the target root (the host's may differ when staging).
id_in_root() {  # file name
    [ "$2" = root ] && { echo 0; return; }
    awk -F: -v n="$2" '$1 == n { print $3 }' "$R/etc/$1"
}

# Make a directory with a mode and owner; change only what differs.
ensure_dir() {  # path mode owner group
    local path="$R$1" mode="$2" uid gid
    uid="$(id_in_root passwd "$3")"; gid="$(id_in_root group "$4")"
    [ -n "$uid" ] && [ -n "$gid" ] || die "unknown user/group $3:$4 in $ROOT"
    if [ ! -d "$path" ]; then
        mkdir -p "$path"; chmod "$mode" "$path"; chown "$uid:$gid" "$path"
        changed "$1/"
    elif [ "$(stat -c '%a %u %g' "$path")" != "${mode#0} $uid $gid" ]; then
        chmod "$mode" "$path"; chown "$uid:$gid" "$path"
        changed "$1/ (mode/owner)"
    else
        unchanged "$1/"
    fi
}

# Copy a file if its content, mode or owner differ. Returns 0 when it changed something.
install_file() {  # src dest mode [owner group]
    local src="$1" dest="$R$2" mode="$3" uid=0 gid=0 want
    if [ $# -ge 5 ]; then
        uid="$(id_in_root passwd "$4")"; gid="$(id_in_root group "$5")"
        [ -n "$uid" ] && [ -n "$gid" ] || die "unknown user/group $4:$5 in $ROOT"
    fi
    want="${mode#0} $uid $gid"
    if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
        if [ "$(stat -c '%a %u %g' "$dest")" = "$want" ]; then
            unchanged "$2"; return 1
        fi
        chmod "$mode" "$dest"; chown "$uid:$gid" "$dest"
        changed "$2 (mode/owner)"; return 0
    fi
    mkdir -p "$(dirname "$dest")"
    install -m "$mode" -o "$uid" -g "$gid" "$src" "$dest.tmp.$$" || die "cannot write $dest"
    mv -f "$dest.tmp.$$" "$dest" || die "cannot write $dest"
    changed "$2"; return 0
}

# Write a file only if it does not exist yet (the user's configuration).
install_once() {  # src dest mode owner group
    if [ -e "$R$2" ]; then
        unchanged "$2 (kept: yours to edit)"; return 1
    fi
    install_file "$@"
}

# Write generated text through install_file.
install_text() {  # dest mode text
    local tmp; tmp="$(mktemp)"
    printf '%s' "$3" > "$tmp"
    local rc=0
    install_file "$tmp" "$1" "$2" || rc=$?
    rm -f "$tmp"
    return "$rc"
}

find_python() {
    local c p
    if [ -n "$PYTHON" ]; then
        p="$PYTHON"
    else
        for c in python3.13 python3.12 python3; do
            p="$(command -v "$c" 2>/dev/null)" || continue
            "$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && break
            p=""
        done
    fi
    [ -n "$p" ] && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null \
        || die "Python >= 3.12 is needed (python-matter-server 8.x requires it). Raspberry Pi OS
based on Debian 13 ships 3.13; on older images install 3.12 and pass --python PATH."
    PYTHON="$p"
}

# --- 1. Debian packages -----------------------------------------------------------
say "Debian packages"
if [ "$SKIP_PACKAGES" = 1 ]; then
    say "  skipped    (--skip-packages/--offline)"
elif [ -n "$R" ]; then
    say "  skipped    (--root: install packages in the image by its own tooling)"
else
    missing=()
    for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
        changed "packages: ${missing[*]}"
    else
        unchanged "packages: ${APT_PACKAGES[*]}"
    fi
fi

# --- 2. system users --------------------------------------------------------------
say "System users"
mkdir -p "$R/etc"
install_file "$SRC/systemd/sysusers.d/atmosphere-bridge.conf" /etc/sysusers.d/atmosphere-bridge.conf 0644 || true
before="$( { cat "$R/etc/passwd" "$R/etc/group" 2>/dev/null || true; } | sha256sum)"
out="$(systemd-sysusers --root="$ROOT" "$R/etc/sysusers.d/atmosphere-bridge.conf" 2>&1)" \
    || die "systemd-sysusers failed: $out"
after="$(cat "$R/etc/passwd" "$R/etc/group" | sha256sum)"
if [ "$before" = "$after" ]; then unchanged "users atmosphere-bridge, atmosphere-matter"
else changed "users atmosphere-bridge, atmosphere-matter"; fi

# --- 3. directories ---------------------------------------------------------------
say "Directories"
ensure_dir "$PREFIX" 0755 root root
ensure_dir /etc/atmosphere-bridge 0750 root atmosphere-bridge
# Mount point for the controller unit's BindPaths (its state is bound here, inside
# the unit's own mount namespace only).
ensure_dir /data 0755 root root

# --- 4. virtual environments -------------------------------------------------------
say "Virtual environments"
find_python
source_hash() {
    (cd "$SRC" && find pyproject.toml bridge cluster_maps -type f ! -path '*/__pycache__/*' ! -name '*.pyc' \
        -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}
make_venv() {  # dir
    local dir="$R$PREFIX/$1"
    if [ -x "$dir/bin/python" ]; then
        unchanged "$PREFIX/$1 (venv)"
    elif [ "$OFFLINE" = 1 ]; then
        "$PYTHON" -m venv --without-pip "$dir"; changed "$PREFIX/$1 (venv, empty: --offline)"
    else
        "$PYTHON" -m venv "$dir"
        "$dir/bin/pip" install -q --upgrade pip
        changed "$PREFIX/$1 (venv)"
    fi
}
# Install a pip spec when its stamp differs from the last install.
pip_install() {  # venv stamp-value spec...
    local dir="$R$PREFIX/$1" want="$2" venv="$1"; shift 2
    if [ "$OFFLINE" = 1 ]; then
        say "  skipped    pip install $* (--offline)"; return
    fi
    if [ -f "$dir/.atmosphere-installed" ] && [ "$(cat "$dir/.atmosphere-installed")" = "$want" ]; then
        unchanged "$PREFIX/$venv: $*"; return
    fi
    if [ "$venv" = venv ]; then
        # The bridge is built from a clean copy of what the package is made of: an in-tree
        # build/ left by an earlier build keeps files that setuptools does not copy again
        # when their date is newer than the sources' (a stale module got installed so).
        local clean; clean="$(mktemp -d)"
        (cd "$SRC" && tar -cf - --exclude='__pycache__' --exclude='*.pyc' \
            pyproject.toml README.md bridge cluster_maps) | tar -xf - -C "$clean" \
            || { rm -rf "$clean"; die "cannot copy the sources to $clean"; }
        "$dir/bin/pip" install -q --upgrade "$clean" || { rm -rf "$clean"; die "pip install failed"; }
        # Same version number, new sources: pip would keep the old build otherwise.
        "$dir/bin/pip" install -q --no-deps --force-reinstall "$clean" \
            || { rm -rf "$clean"; die "pip install failed"; }
        rm -rf "$clean"
    else
        "$dir/bin/pip" install -q --upgrade "$@"
    fi
    printf '%s' "$want" > "$dir/.atmosphere-installed"
    SERVICES_CHANGED=1
    changed "$PREFIX/$venv: $*"
}
make_venv venv
make_venv controller-venv
pip_install venv "bridge $(source_hash)" "$SRC"
pip_install controller-venv "$MATTER_SERVER_SPEC" "$MATTER_SERVER_SPEC"
# The command on PATH for people (the units call the venv's copy directly).
link="$R/usr/local/bin/atmosphere-bridge"
if [ "$(readlink "$link" 2>/dev/null)" = "$PREFIX/venv/bin/atmosphere-bridge" ]; then
    unchanged /usr/local/bin/atmosphere-bridge
else
    mkdir -p "$(dirname "$link")"; ln -sfn "$PREFIX/venv/bin/atmosphere-bridge" "$link"
    changed "/usr/local/bin/atmosphere-bridge -> $PREFIX/venv/bin/atmosphere-bridge"
fi

# The controller's launcher runs in the controller's venv and imports nothing from the
# bridge: it is installed as a file of its own.
install_file "$SRC/bridge/matter/controller/guard.py" "$PREFIX/libexec/controller_guard.py" 0644 || true

# --- 5. documentation -------------------------------------------------------------
say "Documentation"
for f in "$SRC"/firmware_notes/*.md; do
    [ -f "$f" ] || continue
    install_file "$f" "$PREFIX/share/doc/firmware_notes/$(basename "$f")" 0644 || true
done
for f in configuration.md appliance.md; do
    [ -f "$SRC/docs/$f" ] && { install_file "$SRC/docs/$f" "$PREFIX/share/doc/$f" 0644 || true; }
done

# --- 6. configuration -------------------------------------------------------------
say "Configuration"
install_once "$SRC/systemd/atmosphere-bridge.yaml" /etc/atmosphere-bridge/config.yaml 0640 root atmosphere-bridge || true
install_once "$SRC/systemd/controller.env" /etc/atmosphere-bridge/controller.env 0644 root root || true
# The key only the bridge holds: the controller's launcher (libexec/controller_guard.py)
# refuses every request without it and every request with an Origin (a web page). Both
# units receive it through systemd's LoadCredential=, readable by their own user only.
if [ -s "$R/etc/atmosphere-bridge/controller.key" ]; then
    chmod 0600 "$R/etc/atmosphere-bridge/controller.key"; chown 0:0 "$R/etc/atmosphere-bridge/controller.key"
    unchanged /etc/atmosphere-bridge/controller.key
else
    mkdir -p "$R/etc/atmosphere-bridge"
    ( umask 077; head -c 48 /dev/urandom | base64 -w0 > "$R/etc/atmosphere-bridge/controller.key.tmp.$$" ) \
        || die "cannot write the controller key"
    mv -f "$R/etc/atmosphere-bridge/controller.key.tmp.$$" "$R/etc/atmosphere-bridge/controller.key"
    changed "/etc/atmosphere-bridge/controller.key (new, 0600)"
fi

# --- 7. kernel settings for Thread -------------------------------------------------
say "Kernel settings"
# Is the border router on this machine? Then it routes (forwarding on) and needs
# accept_ra=2; its own setup writes forwarding, we only add what Thread routes need.
if [ "$OTBR_DROPIN" = "auto" ]; then
    OTBR_DROPIN="no"
    for d in /etc/systemd/system /lib/systemd/system /usr/lib/systemd/system; do
        [ -f "$R$d/otbr-agent.service" ] && OTBR_DROPIN="yes"
    done
fi
if [ -z "$INTERFACE" ] && [ -z "$R" ]; then
    INTERFACE="$(ip -6 route show default 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="dev") {print $(i+1); exit}}')"
    [ -n "$INTERFACE" ] || INTERFACE="$(ip -4 route show default 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="dev") {print $(i+1); exit}}')"
fi
if [ -z "$INTERFACE" ]; then
    say "  skipped    no --interface given and no default route found"
else
    case "$INTERFACE" in *[!A-Za-z0-9._-]*) die "bad interface name: $INTERFACE" ;; esac
    sysctl_text="# Written by Atmosphere Matter Bridge scripts/install.sh for $INTERFACE.
# Thread devices are reached through routes that border routers announce in IPv6
# router advertisements (Route Information Options with /64 prefixes).
net.ipv6.conf.$INTERFACE.disable_ipv6 = 0
net.ipv6.conf.$INTERFACE.accept_ra_rtr_pref = 1
net.ipv6.conf.$INTERFACE.accept_ra_rt_info_max_plen = 64
"
    if [ "$OTBR_DROPIN" = "yes" ]; then
        sysctl_text+="# otbr-agent runs here and forwards between Thread and the LAN; with forwarding
# on, the kernel only accepts router advertisements when accept_ra is 2.
net.ipv6.conf.$INTERFACE.accept_ra = 2
"
    else
        sysctl_text+="# A plain host: accept router advertisements, do not forward.
net.ipv6.conf.$INTERFACE.accept_ra = 1
net.ipv6.conf.$INTERFACE.forwarding = 0
"
    fi
    if install_text /etc/sysctl.d/60-atmosphere-bridge.conf 0644 "$sysctl_text"; then SYSCTL_CHANGED=1; fi
fi

# --- 8. systemd units ---------------------------------------------------------------
say "systemd units"
for u in atmosphere-matter-controller.service atmosphere-bridge.service; do
    if install_file "$SRC/systemd/$u" "/etc/systemd/system/$u" 0644; then UNITS_CHANGED=1; fi
done
if [ "$OTBR_DROPIN" = "yes" ]; then
    if install_file "$SRC/systemd/otbr-agent.service.d/10-atmosphere.conf" \
        /etc/systemd/system/otbr-agent.service.d/10-atmosphere.conf 0644; then UNITS_CHANGED=1; fi
else
    say "  skipped    otbr-agent drop-in (no otbr-agent.service here)"
fi

want_links=0
for u in atmosphere-matter-controller.service atmosphere-bridge.service; do
    [ -L "$R/etc/systemd/system/multi-user.target.wants/$u" ] || want_links=1
done
if [ "$want_links" = 1 ]; then
    if [ -n "$R" ]; then
        systemctl --root="$ROOT" enable atmosphere-matter-controller.service atmosphere-bridge.service >/dev/null 2>&1
    else
        systemctl daemon-reload
        systemctl enable atmosphere-matter-controller.service atmosphere-bridge.service >/dev/null 2>&1
    fi
    changed "enabled atmosphere-matter-controller.service atmosphere-bridge.service"
else
    unchanged "enabled atmosphere-matter-controller.service atmosphere-bridge.service"
fi

# --- 9. apply (only on the live system) -----------------------------------------------
if [ -z "$R" ]; then
    [ "$SYSCTL_CHANGED" = 1 ] && sysctl -q -p /etc/sysctl.d/60-atmosphere-bridge.conf
    [ "$UNITS_CHANGED" = 1 ] && systemctl daemon-reload
    if [ "$START" = 1 ]; then
        if [ "$UNITS_CHANGED" = 1 ] || [ "$SERVICES_CHANGED" = 1 ]; then
            systemctl restart atmosphere-matter-controller.service atmosphere-bridge.service
            say "  restarted  atmosphere-matter-controller.service atmosphere-bridge.service"
        else
            systemctl start atmosphere-matter-controller.service atmosphere-bridge.service
        fi
    fi
fi

say "Done: $CHANGED changed, $UNCHANGED unchanged."
[ -z "$R" ] && say "Next: sudo atmosphere-bridge doctor"
exit 0
