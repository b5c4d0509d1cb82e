"""A unit's hardening directives applied without systemd (no systemd runs as PID 1 here).

``mount_steps(fields, ...)`` returns the shell commands that give a process, inside its
own private mount namespace, what the unit's ``ProtectSystem=strict`` (every mount
read-only but /dev, /proc, /sys and the unit's writable paths), ``ProtectHome=yes``
(/home and /run/user empty and inaccessible), ``PrivateDevices=yes`` (a /dev of its own
with null, zero, full, random, urandom and tty only), ``PrivateTmp=yes``,
``StateDirectory=``, ``BindPaths=`` and ``LimitNOFILE=`` mean (the latter capped at
this machine's hard limit when it is lower and cannot be raised: see ``nofile``).

``write_seccomp_exec(dir, fields)`` writes a small program that installs the unit's
``SystemCallFilter=`` (the syscall sets expanded by this machine's ``systemd-analyze
syscall-filter``, the same tables systemd itself uses), ``SystemCallErrorNumber=``,
``SystemCallArchitectures=native``, ``RestrictAddressFamilies=`` (``socket()`` of any
other family fails) and ``RestrictNamespaces=yes`` (``unshare``/``setns`` refused,
``clone`` with a ``CLONE_NEW*`` flag refused, ``clone3`` answered ENOSYS so libc falls
back to ``clone``, as systemd does) through libseccomp, then executes the service: the
filter stays on across ``execve``. It runs after ``setpriv --no-new-privs`` drops to the
service user, as systemd applies the filter last.

Differences from systemd, named: a refused ``socket()`` family fails with the unit's
error number (EPERM) instead of EAFNOSUPPORT; /root stays reachable read-only because
the stand-in system Python lives under it (see test_install_e2e's module doc).
"""

from __future__ import annotations

import json
import resource
import shlex
import subprocess
from functools import cache
from pathlib import Path

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


def _q(path: Path | str) -> str:
    return shlex.quote(str(path))


def mount_steps(
    fields: dict[str, list[str]], state_dir: Path | None, binds: tuple[tuple[Path, str], ...]
) -> list[str]:
    """Return shell commands applying the unit's file-system and limit directives."""
    yes = {
        key: fields.get(key, ["no"])[0]
        for key in ("ProtectSystem", "ProtectHome", "PrivateDevices", "PrivateTmp")
    }
    steps: list[str] = []
    if yes["ProtectHome"] == "yes":
        steps += [
            f"if [ -d {d} ]; then mount -t tmpfs -o mode=000 atm-protect-home {d}; fi"
            for d in ("/home", "/run/user")
        ]
    if yes["PrivateDevices"] == "yes":
        steps.append("mkdir /mnt/dev && mount -t tmpfs -o mode=0755 atm-private-dev /mnt/dev")
        for name in DEVICES:
            steps.append(f"touch /mnt/dev/{name} && mount --bind /dev/{name} /mnt/dev/{name}")
        steps += [
            "mkdir /mnt/dev/shm && mount -t tmpfs -o mode=1777 atm-dev-shm /mnt/dev/shm",
            "ln -s /proc/self/fd /mnt/dev/fd && ln -s /proc/self/fd/0 /mnt/dev/stdin"
            " && ln -s /proc/self/fd/1 /mnt/dev/stdout && ln -s /proc/self/fd/2 /mnt/dev/stderr",
            "mount --move /mnt/dev /dev",
        ]
    if yes["ProtectSystem"] == "strict":
        # Every mount read-only, API file systems aside; writable paths come after.
        steps.append(
            "awk '{print $5}' /proc/self/mountinfo | while read -r m; do case \"$m\" in "
            "/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) ;; "
            # A mount under a covered path (our /root, /mnt) is out of reach already.
            '*) if [ -e "$m" ]; then mount -o remount,bind,ro "$m" || exit 1; fi;; '
            "esac; done"
        )
    if yes["PrivateTmp"] == "yes":
        steps.append("mount -t tmpfs -o mode=1777 atm-private-tmp /tmp")
    writable: list[tuple[Path | str, str]] = []
    if state_dir is not None:
        writable.append((state_dir, str(state_dir)))
    writable += [(source, target) for source, target in binds]
    for source, target in writable:
        steps.append(
            f"mount --bind {_q(source)} {_q(target)} && mount -o remount,bind,rw {_q(target)}"
        )
    for limit in fields.get("LimitNOFILE", []):
        steps.append(f"ulimit -n {nofile(int(limit))}")
    return steps


def nofile(limit: int) -> int:
    """Return ``LimitNOFILE=limit`` as this machine can grant it: systemd (PID 1, every
    capability) raises the hard limit; a container without CAP_SYS_RESOURCE cannot go
    above its own hard limit, so the unit gets that (named in docs/testing.md)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return limit if hard == resource.RLIM_INFINITY else min(limit, hard)


@cache
def syscall_groups() -> dict[str, tuple[str, ...]]:
    """Return systemd's syscall groups (``@name`` -> entries), from ``systemd-analyze``."""
    out = subprocess.run(
        ["systemd-analyze", "syscall-filter"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    groups: dict[str, list[str]] = {}
    current = ""
    for line in out.splitlines():
        if line.startswith("@"):
            current = line.split()[0]
            groups[current] = []
        elif line.startswith("    ") and current and not line.strip().startswith("#"):
            groups[current].append(line.split()[0])
    return {name: tuple(entries) for name, entries in groups.items()}


def expand(entry: str, seen: frozenset[str] = frozenset()) -> set[str]:
    """Return the syscall names ``entry`` (a name or an ``@group``) stands for."""
    if not entry.startswith("@"):
        return {entry}
    if entry in seen:
        return set()
    names: set[str] = set()
    for item in syscall_groups()[entry]:
        names |= expand(item, seen | {entry})
    return names


def filter_spec(fields: dict[str, list[str]]) -> dict[str, object]:
    """Return the seccomp filter the unit's directives describe (JSON for the program)."""
    allowed: set[str] = set()
    for spec in fields.get("SystemCallFilter", []):
        words = spec.split()
        deny = words[0].startswith("~")
        names = set().union(*(expand(w.lstrip("~")) for w in words))
        allowed = allowed - names if deny else allowed | names
    families = [w for spec in fields.get("RestrictAddressFamilies", []) for w in spec.split()]
    return {
        "allowed": sorted(allowed),
        "errno": fields.get("SystemCallErrorNumber", ["EPERM"])[0],
        "families": families,
        "restrict_namespaces": fields.get("RestrictNamespaces", ["no"])[0] == "yes",
    }


SECCOMP_EXEC = r'''
"""Install a seccomp filter described by a JSON file, then execute argv[2:]."""
import ctypes, errno, json, os, socket, sys

spec = json.load(open(sys.argv[1]))
lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                       ctypes.c_uint, ctypes.c_void_p]
lib.seccomp_load.argtypes = [ctypes.c_void_p]

class Cmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]

ALLOW = 0x7FFF0000
def refuse(number): return 0x00050000 | (number & 0xFFFF)
CMP_EQ, CMP_MASKED_EQ = 4, 7
NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 \
    | 0x20000000 | 0x40000000 | 0x00000080

ctx = lib.seccomp_init(refuse(getattr(errno, spec["errno"])))
assert ctx, "seccomp_init failed"

def rule(action, name, *cmps):
    nr = lib.seccomp_syscall_resolve_name(name.encode())
    if nr < 0:  # not a syscall of this architecture
        return
    array = (Cmp * len(cmps))(*cmps) if cmps else None
    rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), array)
    assert rc == 0, (name, rc)

special = {"socket"} | ({"clone", "clone3", "unshare", "setns"}
                        if spec["restrict_namespaces"] else set())
for name in spec["allowed"]:
    if name not in special:
        rule(ALLOW, name)
if "socket" in spec["allowed"]:
    if spec["families"]:
        for family in spec["families"]:
            rule(ALLOW, "socket", Cmp(0, CMP_EQ, getattr(socket, family), 0))
    else:
        rule(ALLOW, "socket")
if spec["restrict_namespaces"]:
    if "clone" in spec["allowed"]:
        rule(ALLOW, "clone", Cmp(0, CMP_MASKED_EQ, NEW_NAMESPACES, 0))
    rule(refuse(errno.ENOSYS), "clone3")
assert lib.seccomp_load(ctx) == 0, "seccomp_load failed"
os.execv(sys.argv[2], sys.argv[2:])
'''


def write_seccomp_exec(directory: Path, name: str, fields: dict[str, list[str]]) -> list[str]:
    """Write the filter program and the unit's filter; return the argv prefix to use."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o755)
    program = directory / "seccomp_exec.py"
    program.write_text(SECCOMP_EXEC)
    program.chmod(0o644)
    spec = directory / f"{name}.seccomp.json"
    spec.write_text(json.dumps(filter_spec(fields), indent=1))
    spec.chmod(0o644)
    return [str(program), str(spec)]
