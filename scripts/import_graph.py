"""Print the package-level import graph of ``bridge/`` as a few lines of text.

Every ``import`` counts, also those inside functions and under ``TYPE_CHECKING`` (they
are dependencies all the same, and the layer contracts count them too). A string that
names a bridge module (``importlib.import_module("bridge.mcp.http")``) counts as an
import marked ``~``. A node is a sub-package of ``bridge`` or a top-level module;
``tools.builtin`` and ``mcp.tool_names`` stand apart (a tool source and a naming
rule, not core or faces). ``<->`` marks an arrow whose way back also exists. The last
lines list the import cycles between modules of one package. Run it with
``python scripts/import_graph.py``; ``--inside bridge.matter`` draws one package's own
graph instead (a node per sub-package or module of it) and counts who outside it
imports which of its modules (a package with a front door: only the package itself).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APART = ("bridge.tools.builtin", "bridge.mcp.tool_names")


def module_name(path: Path) -> str:
    """Return the dotted module name of a file under the repository root."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted((ROOT / "bridge").rglob("*.py"))}


def node_of(module: str) -> str:
    """Return the graph node a bridge module belongs to."""
    for apart in APART:
        if module == apart or module.startswith(apart + "."):
            return apart.removeprefix("bridge.")
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "bridge"


def owner(name: str) -> str | None:
    """Return the bridge module a dotted name lives in (``a.b.func`` → ``a.b``)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(module: str) -> dict[str, bool]:
    """Return the bridge modules ``module`` imports, each mapped to "by string only"."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: dict[str, bool] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names = [f"{base}.{alias.name}" for alias in node.names] or [base]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in MODULES and node.value != "bridge":
                found.setdefault(node.value, True)
            continue
        for name in names:
            target = owner(name)
            if target is not None:
                found[target] = False
    found.pop(module, None)
    return found


def inside(package: str) -> int:
    """Print ``package``'s own graph, then which of its modules outsiders import."""
    prefix = package + "."
    edges: dict[str, set[str]] = defaultdict(set)
    outsiders: dict[str, set[str]] = defaultdict(set)
    for module in MODULES:
        targets = [t for t in imports(module) if t == package or t.startswith(prefix)]
        if module == package or module.startswith(prefix):
            src = module.removeprefix(prefix).split(".")[0] if module != package else "(door)"
            edges[src]
            for target in targets:
                dst = target.removeprefix(prefix).split(".")[0] if target != package else "(door)"
                if dst != src:
                    edges[src].add(dst)
        else:
            for target in targets:
                outsiders[target].add(module)
    for src in sorted(edges):
        print(f"{src:15} -> {' '.join(sorted(edges[src])) or '(nothing)'}")
    importers = set().union(*outsiders.values()) if outsiders else set()
    print(
        f"imported from outside: {len(outsiders)} modules of {package} "
        f"by {len(importers)} modules: "
        + " ".join(sorted(t.removeprefix(prefix) if t != package else package for t in outsiders))
    )
    return 0


def main() -> int:
    """Print ``node -> nodes`` per line, then the cycles between modules of a package."""
    if len(sys.argv) == 3 and sys.argv[1] == "--inside":
        return inside(sys.argv[2])
    edges: dict[str, dict[str, bool]] = defaultdict(dict)
    module_edges: dict[str, set[str]] = defaultdict(set)
    for module in MODULES:
        src = node_of(module)
        edges[src]
        for target, by_string in imports(module).items():
            module_edges[module].add(target)
            dst = node_of(target)
            if dst != src and target != "bridge":
                edges[src][dst] = edges[src].get(dst, True) and by_string
    for src in sorted(edges):
        deps = []
        for dst, by_string in sorted(edges[src].items()):
            back = src in edges.get(dst, {})
            deps.append(f"{dst}{'~' if by_string else ''}{'<->' if back else ''}")
        print(f"{src:13} -> {' '.join(deps) or '(nothing)'}")
    cycles = []
    for a, targets in module_edges.items():
        for b in sorted(targets):
            same_package = a.rpartition(".")[0] == b.rpartition(".")[0]
            if a < b and same_package and a in module_edges.get(b, set()):
                by_string = imports(a)[b] or imports(b)[a]
                cycles.append(
                    f"{a.removeprefix('bridge.')}<->{b.rpartition('.')[2]}"
                    + ("~" if by_string else "")
                )
    print("module cycles: " + (" ".join(sorted(cycles)) if cycles else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
