"""The tool manifest (``tools.yaml``): which tools this node loads and from where.

Details: docs/modules.md, ``bridge.tools.manifest``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from bridge.errors import BridgeError, ErrorCode, InvalidDefinitionError
from bridge.tools.decorator import ToolSpec, spec_of
from bridge.tools.definition import ExecutionType, ToolDefinition
from bridge.tools.env import ToolEnv
from bridge.tools.registry import ToolRegistry

ENTRY_POINT_GROUP = "atmosphere_bridge.tools"
BUILTIN_GROUP = "atmosphere_bridge.builtins"
BuiltinFactory = Callable[[Mapping[str, Any], ToolEnv], Iterable[ToolSpec]]
_ENTRY_KEYS = frozenset({"name", "source", "entry", "config"})
_SOURCES = "'builtin:NAME', 'plugin:ENTRY_POINT', 'file:PATH' or 'definition:PATH'"


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestEntry:
    """One ``tools:`` entry."""

    index: int
    source: str
    name: str | None = None
    entry: str | None = None
    config: Mapping[str, Any]

    @property
    def label(self) -> str:
        """Return how messages name this entry: ``#index (name, source)``."""
        return f"entry #{self.index} ({self.name or '-'}, {self.source})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestProblem:
    """Why one entry (or the whole file, index -1) did not load.

    ``message`` is the full reason for the log; ``summary`` says the same without quoting
    configuration values or foreign exceptions, for unauthenticated status pages.
    """

    index: int
    name: str | None
    source: str | None
    message: str
    code: ErrorCode = ErrorCode.CONFIG_INVALID
    summary: str

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "index": self.index,
            "name": self.name,
            "source": self.source,
            "message": self.message,
            "code": self.code.value,
            "summary": self.summary,
        }

    def public_json(self) -> dict[str, Any]:
        """Return the form safe to publish: the summary instead of the message."""
        return {
            "entry": self.index if self.index >= 0 else None,
            "name": self.name,
            "source": self.source,
            "code": self.code.value,
            "message": self.summary,
        }


def _file_problem(message: str, summary: str | None = None) -> ManifestProblem:
    """Return a problem of the whole manifest (index -1)."""
    return ManifestProblem(
        index=-1, name=None, source=None, message=message, summary=summary or message
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestResult:
    """Identities registered and problems found."""

    loaded: tuple[str, ...]
    problems: tuple[ManifestProblem, ...]


def parse_manifest(text: str) -> tuple[list[ManifestEntry], list[ManifestProblem]]:
    """Parse manifest YAML into entries and problems (one per malformed entry)."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        # The error's text quotes the offending line, which may hold a secret.
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        return [], [_file_problem(f"invalid YAML: {err}", f"invalid YAML{where}")]
    if doc is None:
        return [], []
    if not isinstance(doc, Mapping) or not isinstance(doc.get("tools", []), list):
        return [], [_file_problem("the manifest must be a mapping with a 'tools' list")]
    entries: list[ManifestEntry] = []
    problems: list[ManifestProblem] = []
    for index, raw in enumerate(doc.get("tools") or []):
        problem = _entry_problem(raw)
        name = raw.get("name") if isinstance(raw, Mapping) else None
        source = raw.get("source") if isinstance(raw, Mapping) else None
        if problem is not None or not isinstance(raw, Mapping):
            # Built from key names, ``name`` and ``source`` only — never from ``config``.
            message = f"entry #{index} ({name or '-'}): {problem or 'must be a mapping'}"
            problems.append(
                ManifestProblem(
                    index=index,
                    name=name if isinstance(name, str) else None,
                    source=source if isinstance(source, str) else None,
                    message=message,
                    summary=message,
                )
            )
            continue
        entries.append(
            ManifestEntry(
                index=index,
                source=raw["source"],
                name=raw.get("name"),
                entry=raw.get("entry"),
                config=dict(raw.get("config") or {}),
            )
        )
    return entries, problems


def _entry_problem(raw: Any) -> str | None:
    if not isinstance(raw, Mapping):
        return "must be a mapping"
    unknown = sorted(str(k) for k in raw if k not in _ENTRY_KEYS)
    if unknown:
        return f"unknown key(s) {', '.join(unknown)} (allowed: config, entry, name, source)"
    source = raw.get("source")
    if not isinstance(source, str) or ":" not in source:
        return f"'source' must be {_SOURCES}"
    kind, _, target = source.partition(":")
    if kind not in ("builtin", "plugin", "file", "definition") or not target:
        return f"source '{source}' must be {_SOURCES}"
    for key in ("name", "entry"):
        if key in raw and not isinstance(raw[key], str):
            return f"'{key}' must be a string"
    if "config" in raw and raw["config"] is not None and not isinstance(raw["config"], Mapping):
        return "'config' must be a mapping"
    return None


def installed_builtins() -> dict[str, BuiltinFactory]:
    """Return the built-in tool catalogues installed packages declare (``BUILTIN_GROUP``)."""
    found: dict[str, BuiltinFactory] = {}
    for point in metadata.entry_points(group=BUILTIN_GROUP):
        found.update(point.load())
    return found


def load_manifest(
    path: Path | str,
    registry: ToolRegistry,
    env: ToolEnv,
    *,
    builtins: Mapping[str, BuiltinFactory] | None = None,
) -> ManifestResult:
    """Load every entry of the manifest at ``path`` into ``registry``.

    ``builtin:NAME`` sources come from ``builtins`` (default: ``installed_builtins()``).
    """
    manifest = Path(path)
    try:
        text = manifest.read_text(encoding="utf-8")
    except OSError as err:
        problem = _file_problem(
            f"cannot read {manifest}: {err.strerror}",
            f"cannot read the tool manifest: {err.strerror}",
        )
        return ManifestResult(loaded=(), problems=(problem,))
    return load_manifest_text(text, registry, env, base_dir=manifest.parent, builtins=builtins)


def load_manifest_text(
    text: str,
    registry: ToolRegistry,
    env: ToolEnv,
    *,
    base_dir: Path,
    builtins: Mapping[str, BuiltinFactory] | None = None,
) -> ManifestResult:
    """Load manifest YAML ``text``; ``file:`` paths are relative to ``base_dir``."""
    entries, problems = parse_manifest(text)
    catalogue = builtins
    loaded: list[str] = []
    for entry in entries:
        try:
            if catalogue is None and entry.source.startswith("builtin:"):
                catalogue = installed_builtins()
            specs = _select(entry, resolve_entry(entry, env, base_dir, catalogue or {}))
            for spec in specs:
                registry.register(spec.definition, spec.handler)
                loaded.append(spec.definition.identity)
        except BridgeError as err:
            problems.append(_problem(entry, err.message, err.code))
        except Exception as err:  # a plugin's own bug must not stop the others
            problems.append(_problem(entry, f"{type(err).__name__}: {err}", ErrorCode.TOOL_FAILED))
    problems.sort(key=lambda p: p.index)
    return ManifestResult(loaded=tuple(loaded), problems=tuple(problems))


def _problem(entry: ManifestEntry, message: str, code: ErrorCode) -> ManifestProblem:
    # The message may come from the source's own code and quote its config.
    return ManifestProblem(
        index=entry.index,
        name=entry.name,
        source=entry.source,
        message=f"{entry.label}: {message}",
        code=code,
        summary=f"{entry.label}: did not load ({code.value}); the bridge log has the reason",
    )


def _select(entry: ManifestEntry, specs: list[ToolSpec]) -> list[ToolSpec]:
    if entry.name is None:
        if not specs:
            raise InvalidDefinitionError("the source provides no tools")
        return specs
    chosen = [s for s in specs if s.definition.name == entry.name]
    if not chosen and len(specs) == 1:
        # One tool under another name: the entry names it (seed: custom_analyzer ← analyze).
        only = specs[0]
        return [ToolSpec(definition=only.definition.replace(name=entry.name), handler=only.handler)]
    if not chosen:
        offered = ", ".join(sorted(s.definition.name for s in specs)) or "none"
        raise InvalidDefinitionError(
            f"the source provides no tool named '{entry.name}' (it provides: {offered})"
        )
    return chosen


def resolve_entry(
    entry: ManifestEntry,
    env: ToolEnv,
    base_dir: Path,
    builtins: Mapping[str, BuiltinFactory],
) -> list[ToolSpec]:
    """Return the tools an entry's source provides; raise ``InvalidDefinitionError``."""
    kind, _, target = entry.source.partition(":")
    if kind == "builtin":
        factory = builtins.get(target)
        if factory is None:
            raise InvalidDefinitionError(
                f"unknown builtin '{target}' (known: {', '.join(sorted(builtins))})"
            )
        return _specs_from(factory(entry.config, env), entry)
    if kind == "plugin":
        found = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == target]
        if not found:
            raise InvalidDefinitionError(
                f"no entry point '{target}' in group '{ENTRY_POINT_GROUP}' "
                "(is the plugin installed?)"
            )
        obj = found[0].load()
        if entry.entry is not None:
            obj = _attribute(obj, entry.entry)
        return _from_object(obj, entry, env)
    if kind == "definition":
        return [_client_tool(base_dir / target, env)]
    module = _load_file(base_dir / target)
    obj = _attribute(module, entry.entry) if entry.entry is not None else module
    return _from_object(obj, entry, env)


def _client_tool(path: Path, env: ToolEnv) -> ToolSpec:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InvalidDefinitionError(f"cannot read '{path}': {err.strerror}") from err
    definition = ToolDefinition.from_text(text)
    if definition.type is not ExecutionType.CLIENT:
        raise InvalidDefinitionError(
            f"'{path.name}' defines a '{definition.type.value}' tool; a definition-only "
            "entry must be a client tool (type: client); server tools need code (file:)"
        )
    if env.client_handler is None:
        raise InvalidDefinitionError("client tools need the invocation layer, which is off")
    return ToolSpec(definition=definition, handler=env.client_handler(definition))


def _attribute(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name)
    except AttributeError as err:
        raise InvalidDefinitionError(
            f"'{name}' not found in {getattr(obj, '__name__', obj)}"
        ) from err


def _load_file(path: Path) -> types.ModuleType:
    if not path.is_file():
        raise InvalidDefinitionError(f"file '{path}' does not exist")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"atmosphere_bridge_tools_{digest}", path)
    if spec is None or spec.loader is None:
        raise InvalidDefinitionError(f"file '{path}' is not a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        raise InvalidDefinitionError(
            f"file '{path}' has a syntax error: {err.msg} (line {err.lineno})"
        ) from err
    return module


def _from_object(obj: Any, entry: ManifestEntry, env: ToolEnv) -> list[ToolSpec]:
    if isinstance(obj, ToolSpec) or spec_of(obj) is not None:
        if entry.config:
            raise InvalidDefinitionError(
                "'config' is given but the source is a single tool, not a factory"
            )
        return _specs_from([obj], entry)
    if isinstance(obj, types.ModuleType):
        return _specs_from(vars(obj).values(), entry, skip_others=True)
    if callable(obj):
        return _specs_from(obj(entry.config, env), entry)
    raise InvalidDefinitionError(f"{obj!r} is not a tool, a module or a tool factory")


def _specs_from(
    items: Iterable[Any], entry: ManifestEntry, *, skip_others: bool = False
) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    for item in items:
        if isinstance(item, ToolSpec):
            specs.append(item)
            continue
        spec = spec_of(item)
        if spec is not None:
            specs.append(spec)
        elif not skip_others:
            raise InvalidDefinitionError(f"the source produced {item!r}, which is not a tool")
    return specs
