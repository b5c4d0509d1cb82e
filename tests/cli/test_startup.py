"""Building the CLI parser must not import the Matter SDK or the controller client.

Every ``atmosphere-bridge`` call builds the full parser first; ``chip.clusters.Objects``
alone takes seconds to import, so command modules import the Matter layer (and the
service) inside the functions that run a command. The check runs in a fresh interpreter
because this test process has long since imported everything.
"""

import json
import subprocess
import sys

_PROBE = """
import json, sys
from bridge.cli.main import build_parser
parser = build_parser()
commands = sorted(parser._subparsers._group_actions[0].choices)
heavy = sorted(
    name for name in ("chip", "matter_server", "bridge.matter.controller.adapter", "bridge.service")
    if name in sys.modules
)
print(json.dumps({"commands": commands, "heavy": heavy}))
"""


def test_building_the_parser_leaves_the_matter_sdk_unimported() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["heavy"] == []
    assert result["commands"] == [
        "approvals",
        "audit",
        "automations",
        "commission",
        "config",
        "console",
        "demo",
        "devices",
        "doctor",
        "floors",
        "generate",
        "invoke",
        "keys",
        "mcp",
        "mesh",
        "rooms",
        "run",
        "say",
        "sites",
        "token",
        "tools",
        "wyoming",
    ]
