"""The tool model: ``ToolDefinition`` and its sections, and their one JSON/YAML form.

A definition is read from and written to the seed documents' form
``{"$schema": "https://atmosphere.dev/schemas/tool/v1", "tool": {...}}`` (or YAML with
the same shape). Every document is checked against the package's JSON Schema for the
format (``schema/tool_definition.schema.json``), and ``parameters``/``returns`` must be
valid Draft 2020-12 JSON Schemas. A definition loaded from a document remembers which
keys the document spelled out (and unknown extension keys inside sections), so
``to_json(from_json(doc)) == doc`` holds exactly; a definition built in code writes the
full canonical form.

One module because the tool document's sections (requires, execution, routing,
confirmation, audit) are parsed and serialised together and share their validation.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Any, Self

import jsonschema
import orjson
import yaml
from jsonschema.exceptions import SchemaError

from bridge.errors import InvalidDefinitionError
from bridge.tools.identity import NAME_RE, NAMESPACE_RE, Version, make_identity, make_key

SCHEMA_URI = "https://atmosphere.dev/schemas/tool/v1"
DEFAULT_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


class ExecutionType(StrEnum):
    """Who runs a tool (seed 002): this node's code, a connected client, a provider, MCP."""

    SERVER = "server"
    CLIENT = "client"
    PROVIDER = "provider"
    MCP = "mcp"


class ToolIntent(StrEnum):
    """What a call is for (seed 002): a result to use, an effect, or something to show."""

    COMPUTE = "compute"
    ACTION = "action"
    RENDER = "render"


class Category(StrEnum):
    """What a tool does to the world."""

    SENSING = "sensing"
    ACTING = "acting"
    COMMUNICATING = "communicating"
    QUERYING = "querying"
    COMPUTING = "computing"
    MANAGING = "managing"


@dataclass(frozen=True, slots=True, kw_only=True)
class Requires:
    """What a node and a caller need: capabilities, permissions, network, GPU."""

    capabilities: tuple[str, ...] = ()
    permissions: tuple[str, ...] = ()
    network: bool = False
    gpu: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Execution:
    """How a call runs: timeout, retries, idempotency, whether it may run as a job."""

    timeout_ms: int = 30_000
    retries: int = 0
    idempotent: bool = False
    async_allowed: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Routing:
    """Where a call may run: local preference, preferred nodes, hop limit."""

    prefer_local: bool = False
    node_affinity: tuple[str, ...] = ()
    hop_limit: int = 3
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Confirmation:
    """When a call needs a human's approval, and how many approvers."""

    mode: str = "always"
    when: dict[str, Any] | None = None
    message: str = ""
    multi_party: int = 1
    timeout_s: float = 300.0
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    """What the audit log records for a call."""

    log_params: bool = True
    log_result: bool = False
    notify_admins: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


_SECTIONS: dict[str, type[Any]] = {
    "requires": Requires,
    "execution": Execution,
    "routing": Routing,
    "confirmation": Confirmation,
    "audit": Audit,
}
_TUPLE_FIELDS = frozenset({"capabilities", "permissions", "node_affinity"})
# Marks in ``source_keys`` that record how the document spelled something.
_CATEGORY_IN_METADATA = "metadata.category"
_AFFINITY_AS_STRING = "routing.node_affinity:str"
_HAS_SCHEMA = "$schema"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """One tool: identity, description, schemas, requirements, policy and origin.

    Construction checks the name, namespace and version formats and that
    ``parameters``/``returns`` are valid JSON Schemas; it raises
    ``InvalidDefinitionError`` naming the problem.
    """

    name: str
    namespace: str = "core"
    version: str = "1.0.0"
    description: str
    category: Category | None = None
    parameters: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(DEFAULT_PARAMETERS))
    returns: dict[str, Any] | None = None
    requires: Requires = field(default_factory=Requires)
    execution: Execution = field(default_factory=Execution)
    routing: Routing = field(default_factory=Routing)
    metadata: dict[str, Any] = field(default_factory=dict)
    dangerous: bool = False
    confirmation: Confirmation | None = None
    audit: Audit = field(default_factory=Audit)
    server_name: str = ""
    type: ExecutionType = ExecutionType.SERVER
    intent: ToolIntent = ToolIntent.COMPUTE
    extensions: Mapping[str, Any] = field(default_factory=dict)
    # Dotted keys the source document spelled out; empty for definitions built in code.
    source_keys: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    def __post_init__(self) -> None:
        """Check identity formats, the execution type and intent, and the JSON Schemas."""
        where = f"tool '{self.namespace}:{self.name}'"
        for attr, enum in (("type", ExecutionType), ("intent", ToolIntent)):
            value = getattr(self, attr)
            if type(value) is enum:  # built in code: already the member (most tools)
                continue
            try:
                object.__setattr__(self, attr, enum(value))
            except ValueError as err:
                allowed = ", ".join(e.value for e in enum)
                raise InvalidDefinitionError(
                    f"{where}: {attr} {value!r} is not one of {allowed}", {"path": f"tool.{attr}"}
                ) from err
        if not isinstance(self.name, str) or not NAME_RE.match(self.name):
            raise InvalidDefinitionError(
                f"tool name {self.name!r} is invalid: use letters, digits, '_', '.', '-', "
                "starting with a letter (at most 128 characters)",
                {"path": "tool.name"},
            )
        if not isinstance(self.namespace, str) or not NAMESPACE_RE.match(self.namespace):
            raise InvalidDefinitionError(
                f"{where}: namespace {self.namespace!r} is invalid", {"path": "tool.namespace"}
            )
        if not isinstance(self.version, str) or not Version.is_valid(self.version):
            raise InvalidDefinitionError(
                f"{where}: version {self.version!r} is not a semantic version (MAJOR.MINOR.PATCH)",
                {"path": "tool.version"},
            )
        if not self.description or not self.description.strip():
            raise InvalidDefinitionError(
                f"{where}: description is empty", {"path": "tool.description"}
            )
        if not isinstance(self.parameters, dict) or self.parameters.get("type") != "object":
            raise InvalidDefinitionError(
                f'{where}: parameters must be a JSON Schema with "type": "object"',
                {"path": "tool.parameters"},
            )
        _check_json_schema(self.parameters, f"{where}: parameters", "tool.parameters")
        if self.returns is not None:
            _check_json_schema(self.returns, f"{where}: returns", "tool.returns")
        if self.confirmation is not None:
            if self.confirmation.mode not in ("always", "when"):
                raise InvalidDefinitionError(
                    f"{where}: confirmation.mode must be 'always' or 'when'",
                    {"path": "tool.confirmation.mode"},
                )
            if self.confirmation.mode == "when":
                if self.confirmation.when is None:
                    raise InvalidDefinitionError(
                        f"{where}: confirmation.mode 'when' needs a 'when' schema",
                        {"path": "tool.confirmation.when"},
                    )
                _check_json_schema(
                    self.confirmation.when, f"{where}: confirmation.when", "tool.confirmation.when"
                )

    # -- identity -------------------------------------------------------------------

    @property
    def key(self) -> str:
        """Return ``namespace:name``."""
        return make_key(self.namespace, self.name)

    @property
    def identity(self) -> str:
        """Return ``namespace:name@version``."""
        return make_identity(self.namespace, self.name, self.version)

    @property
    def semver(self) -> Version:
        """Return the parsed version."""
        return Version.parse(self.version)

    @property
    def tags(self) -> tuple[str, ...]:
        """Return ``metadata.tags`` as a tuple."""
        tags = self.metadata.get("tags") or ()
        return tuple(str(t) for t in tags)

    @property
    def permissions(self) -> tuple[str, ...]:
        """Return the permissions a caller needs (templates unfilled)."""
        return self.requires.permissions

    def replace(self, **changes: Any) -> Self:
        """Return a copy with ``changes`` applied (checked again)."""
        return dataclasses.replace(self, **changes)

    # -- wire forms -----------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Return the ``{"$schema", "tool": {...}}`` document."""
        full = not self.source_keys
        keys = self.source_keys

        def want(path: str, value: Any, default: Any) -> bool:
            return full or path in keys or value != default

        tool: dict[str, Any] = {"name": self.name}
        if want("namespace", self.namespace, "core"):
            tool["namespace"] = self.namespace
        if want("version", self.version, "1.0.0"):
            tool["version"] = self.version
        tool["description"] = self.description
        category_in_metadata = _CATEGORY_IN_METADATA in keys and "category" not in keys
        if self.category is not None and not category_in_metadata:
            tool["category"] = self.category.value
        if want("parameters", self.parameters, DEFAULT_PARAMETERS):
            tool["parameters"] = copy.deepcopy(self.parameters)
        if self.returns is not None:
            tool["returns"] = copy.deepcopy(self.returns)
        for name in ("requires", "execution", "routing"):
            section = _section_to_json(getattr(self, name), name, keys, full)
            if section is not None:
                tool[name] = section
        metadata = copy.deepcopy(self.metadata)
        if self.category is not None and _CATEGORY_IN_METADATA in keys:
            metadata["category"] = self.category.value
        if metadata or "metadata" in keys:
            tool["metadata"] = metadata
        if want("dangerous", self.dangerous, False):
            tool["dangerous"] = self.dangerous
        if self.confirmation is not None:
            tool["confirmation"] = _section_to_json(self.confirmation, "confirmation", keys, full)
        audit = _section_to_json(self.audit, "audit", keys, full)
        if audit is not None:
            tool["audit"] = audit
        if self.server_name or "server_name" in keys:
            tool["server_name"] = self.server_name
        # Defaults are left out so documents that predate these fields round-trip exactly.
        if self.type is not ExecutionType.SERVER or "type" in keys:
            tool["type"] = self.type.value
        if self.intent is not ToolIntent.COMPUTE or "intent" in keys:
            tool["intent"] = self.intent.value
        tool.update(copy.deepcopy(dict(self.extensions)))
        doc: dict[str, Any] = {}
        if full or _HAS_SCHEMA in keys:
            doc["$schema"] = SCHEMA_URI
        doc["tool"] = tool
        return doc

    @classmethod
    def from_json(cls, doc: Any) -> ToolDefinition:
        """Build a definition from its document; raise ``InvalidDefinitionError`` naming problems.

        The document is ``{"$schema"?, "tool": {...}}``; a bare tool mapping (with
        ``name`` and no ``tool`` key) is accepted too.
        """
        if isinstance(doc, Mapping) and "tool" not in doc and "name" in doc:
            doc = {"tool": dict(doc)}
        check_document(doc)
        body: dict[str, Any] = copy.deepcopy(doc["tool"])
        keys: set[str] = set(body)
        if "$schema" in doc:
            keys.add(_HAS_SCHEMA)
        metadata: dict[str, Any] = body.get("metadata", {})
        category_text = body.get("category")
        if "category" in metadata:
            keys.add(_CATEGORY_IN_METADATA)
            meta_category = metadata.pop("category")
            if category_text is not None and category_text != meta_category:
                raise InvalidDefinitionError(
                    f"tool '{body['name']}': category '{category_text}' and "
                    f"metadata.category '{meta_category}' disagree",
                    {"path": "tool.category"},
                )
            category_text = meta_category
        sections: dict[str, Any] = {}
        for name, section_cls in _SECTIONS.items():
            if name not in body:
                continue
            raw = body[name]
            keys.update(f"{name}.{k}" for k in raw)
            if name == "routing" and isinstance(raw.get("node_affinity"), str):
                keys.add(_AFFINITY_AS_STRING)
            sections[name] = _section_from_json(section_cls, raw)
        known = {f.name for f in dataclasses.fields(cls)} - {"extensions", "source_keys"}
        return cls(
            name=body["name"],
            namespace=body.get("namespace", "core"),
            version=body.get("version", "1.0.0"),
            description=body["description"],
            category=Category(category_text) if category_text is not None else None,
            parameters=body.get("parameters", copy.deepcopy(DEFAULT_PARAMETERS)),
            returns=body.get("returns"),
            metadata=metadata,
            dangerous=body.get("dangerous", False),
            server_name=body.get("server_name", ""),
            type=ExecutionType(body.get("type", "server")),
            intent=ToolIntent(body.get("intent", "compute")),
            extensions={k: v for k, v in body.items() if k not in known},
            source_keys=frozenset(keys),
            **sections,
        )

    @classmethod
    def from_yaml(cls, text: str) -> ToolDefinition:
        """Build a definition from YAML text of the same shape as the JSON document."""
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise InvalidDefinitionError(f"tool definition is not valid YAML: {err}") from err
        return cls.from_json(doc)

    @classmethod
    def from_text(cls, text: str) -> ToolDefinition:
        """Build a definition from JSON or YAML text (JSON is a subset of YAML)."""
        stripped = text.lstrip()
        if stripped.startswith("{"):
            try:
                return cls.from_json(json.loads(text))
            except json.JSONDecodeError as err:
                raise InvalidDefinitionError(
                    f"tool definition is not valid JSON: {err.msg} at line {err.lineno} "
                    f"column {err.colno}"
                ) from err
        return cls.from_yaml(text)

    def flat(self) -> dict[str, Any]:
        """Return the flat view used by agent clients and MCP-style listings.

        Keys: ``name, description, serverName, inputSchemaJson, outputSchemaJson,
        permissions``. ``name`` is the namespaced key; the schemas are compact JSON strings
        (``outputSchemaJson`` is ``""`` when the tool declares no return schema).
        """
        return {
            "name": self.key,
            "description": self.description,
            "serverName": self.server_name,
            "inputSchemaJson": json.dumps(self.parameters, separators=(",", ":")),
            "outputSchemaJson": (
                json.dumps(self.returns, separators=(",", ":")) if self.returns is not None else ""
            ),
            "permissions": list(self.requires.permissions),
        }


# -- helpers ----------------------------------------------------------------------------


def _field_default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _section_to_json(
    obj: Any, prefix: str, keys: frozenset[str], full: bool
) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        if f.name == "extra":
            continue
        value = getattr(obj, f.name)
        if value is None:
            continue
        path = f"{prefix}.{f.name}"
        if full or path in keys or value != _field_default(f):
            if f.name in _TUPLE_FIELDS:
                as_string = path == "routing.node_affinity" and _AFFINITY_AS_STRING in keys
                if as_string and len(value) == 1:
                    out[f.name] = value[0]
                else:
                    out[f.name] = list(value)
            else:
                out[f.name] = copy.deepcopy(value)
    out.update(copy.deepcopy(dict(obj.extra)))
    if out or full or prefix in keys:
        return out
    return None


def _section_from_json(section_cls: type[Any], raw: Mapping[str, Any]) -> Any:
    known = {f.name for f in dataclasses.fields(section_cls)} - {"extra"}
    kwargs: dict[str, Any] = {}
    for k, v in raw.items():
        if k not in known:
            continue
        if k in _TUPLE_FIELDS:
            kwargs[k] = (v,) if isinstance(v, str) else tuple(v)
        else:
            kwargs[k] = v
    return section_cls(**kwargs, extra={k: v for k, v in raw.items() if k not in known})


@lru_cache(maxsize=1)
def definition_validator() -> jsonschema.Draft202012Validator:
    """Return the compiled validator of the definition format's JSON Schema."""
    text = (
        resources.files("bridge.tools")
        .joinpath("schema/tool_definition.schema.json")
        .read_text(encoding="utf-8")
    )
    return jsonschema.Draft202012Validator(json.loads(text))


def check_document(doc: Any) -> None:
    """Check ``doc`` against the definition format; raise naming every failing path."""
    if not isinstance(doc, Mapping):
        raise InvalidDefinitionError(
            f"tool definition must be a mapping with a 'tool' key, got {type(doc).__name__}"
        )
    errors = sorted(
        definition_validator().iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]
    )
    if not errors:
        return
    name = doc.get("tool", {}).get("name") if isinstance(doc.get("tool"), Mapping) else None
    problems = [{"path": _json_path(e.absolute_path), "message": _describe(e)} for e in errors]
    where = f"tool '{name}'" if isinstance(name, str) else "tool definition"
    listing = "; ".join(f"{p['path']}: {p['message']}" for p in problems)
    raise InvalidDefinitionError(f"{where} is invalid: {listing}", {"errors": problems})


def _describe(err: jsonschema.ValidationError) -> str:
    schema = err.schema
    if (
        err.validator == "additionalProperties"
        and isinstance(err.instance, Mapping)
        and isinstance(schema, Mapping)
    ):
        allowed = set(schema.get("properties", {}))
        extra = sorted(k for k in err.instance if k not in allowed and not str(k).startswith("x-"))
        return f"unknown key(s) {', '.join(repr(k) for k in extra)}"
    return err.message


def _json_path(path: Any) -> str:
    text = "$"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _check_json_schema(schema: Any, what: str, path: str) -> None:
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise InvalidDefinitionError(f"{what} must be a JSON Schema object", {"path": path})
    try:
        # The cache key: orjson is ~8x the standard encoder here (a generated home checks
        # thousands of schemas); NaN and infinities are written as null, so a schema
        # spelling them fails the check (JSON has no such numbers).
        canonical = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        try:
            canonical = json.dumps(schema, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise InvalidDefinitionError(f"{what} is not JSON: {err}", {"path": path}) from err
    problem = _schema_problem(canonical)
    if problem is not None:
        where, message = problem
        full = f"{path}.{where}" if where else path
        raise InvalidDefinitionError(
            f"{what} is not a valid JSON Schema: at {full}: {message}", {"path": full}
        )


@lru_cache(maxsize=4096)
def _schema_problem(canonical: str) -> tuple[str, str] | None:
    """Return ``(path, message)`` of the first problem of a JSON Schema, or ``None``."""
    try:
        jsonschema.Draft202012Validator.check_schema(json.loads(canonical))
    except SchemaError as err:
        return ".".join(str(p) for p in err.absolute_path), err.message
    return None
