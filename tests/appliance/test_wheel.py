"""The project as a wheel: built, installed non-editably into a fresh venv, and used.

The wheel must carry everything the bridge reads at run time (cluster maps, schemas,
tool definitions): an install from it, with no source tree anywhere on its path, runs
``atmosphere-bridge generate --node-dump …`` and gets the tools the generator tests expect.
The fresh venv takes the third-party dependencies from the dev venv's site-packages
(a plain path entry: the dev venv's editable finder for ``bridge`` is not loaded).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.appliance.conftest import REPO

DUMPS = [
    REPO / "tests/fixtures/nodes/ha-core" / f"{n}.json"
    for n in ("color_temperature_light", "mock_thermostat")
]
DIM = ["brightness", "on", "off", "toggle", "state"]
THERMO = ["set_temperature", "set_mode", "adjust_temperature", "state"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for tree in ("bridge", "cluster_maps"):  # the package and its top-level data
        shutil.copytree(
            REPO / tree, src / tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)],
        check=True,
        timeout=300,
    )
    [built] = out.glob("atmosphere_bridge-*.whl")
    return built


def test_wheel_carries_the_runtime_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    maps = sorted(n for n in names if n.startswith("cluster_maps/"))
    expected = sorted(f"cluster_maps/{p.name}" for p in (REPO / "cluster_maps").glob("*.yaml"))
    assert maps == expected
    assert len(maps) >= 10
    for data in (
        "bridge/config.schema.json",
        "bridge/matter/tools/cluster_map.schema.json",
        "bridge/py.typed",
    ):
        assert data in names


def test_installed_wheel_generates_tools(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "zz-dev-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import bridge.matter.tools.cluster_maps as m; print(m.DEFAULT_DIRECTORY)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert where == str(site / "cluster_maps")
    result = subprocess.run(
        [
            str(venv / "bin" / "atmosphere-bridge"),
            "generate",
            "--json",
            "--node-dump",
            *map(str, DUMPS),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    installed = json.loads(result.stdout)
    names = [t["definition"]["name"] for t in installed["tools"] if t["device_id"]]
    assert names == [
        # The dump's light also serves ModeSelect (cluster 0x50): a select_mode tool.
        *(
            f"mock_color_temperature_light_{s}"
            for s in ["color_temperature", "brightness", "select_mode", *DIM[1:]]
        ),
        *(f"mock_thermostat_{s}" for s in THERMO),
    ]
