"""``atmosphere-bridge doctor``: diagnose the installation and say how to fix what is wrong."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bridge.cli.config import add_config_flag, config_of
from bridge.doctor.models import Status

if TYPE_CHECKING:
    from bridge.doctor.models import DoctorReport

_LABELS = {Status.OK: "[ ok ]", Status.WARN: "[warn]", Status.FAIL: "[FAIL]"}


def register(subparsers: Any) -> None:
    """Add the ``doctor`` command."""
    parser = subparsers.add_parser(
        "doctor",
        help="check the controller, border router, network and storage; say how to fix",
        description="Check the Matter controller, the Thread border router, the LAN's IPv6 "
        "settings, storage, clock and file permissions. Exit 0 when nothing fails, 1 "
        "when a check fails.",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_config_flag(
        parser,
        "--root",
        key="doctor.root",
        type=Path,
        metavar="PATH",
        help="read /proc, /sys and /etc under PATH instead of / (default: doctor.root)",
    )
    parser.set_defaults(func=run)


def render_text(report: DoctorReport, out: TextIO) -> None:
    """Write the report for a person: one block per check, fixes for the others."""
    for result in report.results:
        out.write(f"{_LABELS[result.status]} {result.title}\n")
        out.write(f"       {result.found}\n")
        if result.fix:
            out.write(f"       fix: {result.fix}\n")
    counts = report.to_json()["counts"]
    out.write(f"\n{counts['ok']} ok, {counts['warn']} warnings, {counts['fail']} failed\n")


def run(args: argparse.Namespace) -> int:
    """Run the checks, print the report, return 1 if any check failed."""
    # The runner brings aiohttp and the configuration schema; only this command needs them.
    from bridge.doctor.runner import run_doctor

    config = config_of(args)
    report = asyncio.run(run_doctor(config))
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render_text(report, sys.stdout)
    return 1 if report.status is Status.FAIL else 0
