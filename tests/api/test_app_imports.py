"""A bridge with Matter off must not load the Matter SDK while building its HTTP app.

``chip.clusters.Objects`` takes seconds to import; with ``--no-matter`` (a mesh-only
node) that time blocked the event loop at every start, long enough for the node's own
mesh announcement to expire. The MCP SDK (~38 MB resident) likewise waits for the first
``/mcp`` request. The check runs in a fresh interpreter.
"""

import json
import subprocess
import sys
from pathlib import Path

_PROBE = """
import json, sys
from pathlib import Path
from bridge.api.app import create_app
from bridge.config import BridgeConfig
from bridge.service import BridgeService
service = BridgeService(BridgeConfig(state_dir=Path(sys.argv[1])), enable_matter=False)
app = create_app(service)
routes = sorted({r.resource.canonical for r in app.router.routes() if r.resource is not None})
heavy = sorted(n for n in ("chip", "matter_server", "bridge.matter.controller.adapter", "mcp")
               if n in sys.modules)
print(json.dumps({"heavy": heavy, "devices_routes": [r for r in routes if "devices" in r]}))
"""


def test_app_without_matter_leaves_the_sdk_unimported(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["heavy"] == []
    assert result["devices_routes"] == [
        "/v1/devices",
        "/v1/devices/commission",
        "/v1/devices/{device}",
        "/v1/devices/{device}/share",
    ]
