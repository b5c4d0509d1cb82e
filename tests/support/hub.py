"""A real ``nats-server`` hub for site tests and benches, configured by ``sites hub-config``.

``Hub`` writes a sites file, runs ``atmosphere-bridge sites hub-config``'s generator on
it (one nkey user per site with its generated permissions), starts ``nats-server`` on
the given address, and stops or restarts it by PID. ``nats-server`` is the Debian package
``make install`` puts in place; a test that needs it fails when it is missing.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bridge.mesh.site_acl import hub_config, parse_sites, write_seed

NATS_SERVER = shutil.which("nats-server") or "/usr/sbin/nats-server"


@dataclass
class Hub:
    """A hub for ``sites``: its config directory, address and process."""

    base: Path
    sites: list[str]
    host: str = "127.0.0.1"
    port: int = 4222
    prefix: list[str] = field(default_factory=list)
    popen: subprocess.Popen[bytes] | None = None
    extra_sites: dict[str, dict[str, object]] = field(default_factory=dict)
    tls_cert_file: str | None = None
    tls_key_file: str | None = None

    @property
    def url(self) -> str:
        scheme = "tls" if self.tls_cert_file else "nats"
        return f"{scheme}://{self.host}:{self.port}"

    def seed_file(self, site: str) -> Path:
        return self.base / f"{site}.nk"

    def configure(self, listen: str | None = None) -> Path:
        entries: list[dict[str, object]] = [
            {"name": s, **self.extra_sites.get(s, {})} for s in self.sites
        ]
        hub: dict[str, object] = {"listen": listen or f"{self.host}:{self.port}"}
        if self.tls_cert_file and self.tls_key_file:
            hub.update(tls_cert_file=self.tls_cert_file, tls_key_file=self.tls_key_file)
        doc = {"hub": hub, "sites": entries}
        (self.base / "sites.yaml").write_text(yaml.safe_dump(doc))
        settings, sites = parse_sites(doc)
        public = {s.name: write_seed(self.seed_file(s.name)) for s in sites}
        conf = self.base / "hub.conf"
        conf.write_text(hub_config(settings, sites, public))
        return conf

    def start(self, timeout_s: float = 15.0) -> None:
        assert self.popen is None
        conf = self.base / "hub.conf"
        if not conf.exists():
            self.configure()
        with (self.base / "hub.log").open("ab") as log:
            self.popen = subprocess.Popen(
                [*self.prefix, NATS_SERVER, "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT
            )
        if not self.prefix:
            self.wait_listening(timeout_s)

    def wait_listening(self, timeout_s: float = 15.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.popen is not None
            assert self.popen.poll() is None, self.log_tail()
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"nats-server did not listen on {self.url}:\n{self.log_tail()}")

    def kill(self) -> None:
        """Kill the hub at once (SIGKILL, no goodbye to its clients)."""
        if self.popen is not None:
            self.popen.kill()
            self.popen.wait(timeout=10)
            self.popen = None

    def stop(self) -> None:
        if self.popen is not None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=5)
            self.popen = None

    def log_tail(self) -> str:
        path = self.base / "hub.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-20:])


def make_tls(base: Path, host: str = "127.0.0.1") -> tuple[Path, Path, Path]:
    """Make a self-signed CA and a hub certificate for ``host`` (openssl); return the files.

    Returns ``(ca.pem, hub.pem, hub.key)``: the commands docs/sites.md gives.
    """
    base.mkdir(parents=True, exist_ok=True)
    ca, ca_key = base / "ca.pem", base / "ca.key"
    cert, key, csr, ext = base / "hub.pem", base / "hub.key", base / "hub.csr", base / "san.cnf"
    ext.write_text(
        f"subjectAltName=IP:{host}\nbasicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"
    )
    for argv in (
        [
            "req",
            "-x509",
            "-new",
            "-nodes",
            "-newkey",
            "rsa:2048",
            "-keyout",
            str(ca_key),
            "-out",
            str(ca),
            "-days",
            "2",
            "-subj",
            "/CN=atmosphere sites test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
        [
            "req",
            "-new",
            "-nodes",
            "-newkey",
            "rsa:2048",
            "-keyout",
            str(key),
            "-out",
            str(csr),
            "-subj",
            f"/CN={host}",
        ],
        [
            "x509",
            "-req",
            "-in",
            str(csr),
            "-CA",
            str(ca),
            "-CAkey",
            str(ca_key),
            "-CAcreateserial",
            "-out",
            str(cert),
            "-days",
            "2",
            "-extfile",
            str(ext),
        ],
    ):
        subprocess.run(["openssl", *argv], check=True, capture_output=True, timeout=60)
    return ca, cert, key
