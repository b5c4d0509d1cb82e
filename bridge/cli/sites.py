"""``atmosphere-bridge sites``: the hub configuration and each site's credentials.

``sites hub-config --sites FILE --out DIR`` reads the sites file (docs/sites.md) and
writes ``DIR/hub.conf`` for ``nats-server`` with one user per site and its generated
permissions, plus ``DIR/<site>.nk`` (0600, the site's nkey seed, to copy to that site's
``mesh.sites.credentials_file``) for every site that did not bring its own public nkey.
Seeds already there are kept, so running it again after adding a site changes nothing
for the others. ``sites credentials --out FILE`` makes a seed at a site and prints its
public nkey for the sites file, so the seed never leaves the site.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import yaml

from bridge.errors import BridgeError, ConfigInvalidError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``sites`` command group."""
    parser = subparsers.add_parser("sites", help="the NATS hub joining sites: config, credentials")
    sub = parser.add_subparsers(dest="sites_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("hub-config", help="write the hub's nats-server config and site seeds")
    p.add_argument("--sites", required=True, type=Path, help="the sites file (YAML)")
    p.add_argument("--out", required=True, type=Path, help="directory for hub.conf and seeds")
    p.set_defaults(func=hub_config_command)

    p = sub.add_parser("credentials", help="make this site's nkey seed, print its public key")
    p.add_argument("--out", required=True, type=Path, help="the seed file to create (0600)")
    p.set_defaults(func=credentials_command)


def hub_config_command(args: argparse.Namespace) -> int:
    """Write ``hub.conf`` and the missing seeds; print one line per site."""
    from bridge.mesh.site_acl import hub_config, parse_sites, write_seed

    try:
        doc = yaml.safe_load(args.sites.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigInvalidError(f"cannot read the sites file {args.sites}: {err}") from err
    settings, sites = parse_sites(doc)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    public: dict[str, str] = {}
    for site in sites:
        if site.nkey is not None:
            public[site.name] = site.nkey
            print(f"{site.name:<20} nkey {site.nkey} (its own)  hears {', '.join(site.hears)}")
            continue
        seed_file = out / f"{site.name}.nk"
        public[site.name] = write_seed(seed_file)
        print(
            f"{site.name:<20} nkey {public[site.name]}  seed {seed_file}  "
            f"hears {', '.join(site.hears)}"
        )
    conf = out / "hub.conf"
    tmp = conf.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(hub_config(settings, sites, public))
    tmp.replace(conf)
    print(f"hub configuration: {conf} (start it with: nats-server -c {conf})")
    return 0


def credentials_command(args: argparse.Namespace) -> int:
    """Create the seed file and print the public nkey to put in the sites file."""
    from bridge.mesh.site_acl import write_seed

    if args.out.exists():
        raise BridgeError(f"{args.out} exists: a site keeps its seed (delete it to make a new one)")
    print(write_seed(args.out))
    return 0
