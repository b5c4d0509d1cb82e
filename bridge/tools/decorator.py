"""Defining tools in Python: ``@tool(...)`` and ``param(...)``.

``@tool`` reads the function's signature and annotations and builds the parameters
JSON Schema: ``str``/``int``/``float``/``bool``, ``Literal[...]`` and ``Enum`` (→ enum),
``list[X]``, ``dict[str, X]``, ``X | None`` (→ nullable, not required), and
``param(...)`` defaults for description, bounds, lengths, pattern and format. A
parameter annotated ``CallContext`` receives the call's context instead. The decorated
function keeps working as a plain coroutine function and gains ``__tool__``, a
``ToolSpec`` of the definition and a registry ``Handler``; ``register_tools`` (or the
``registry=`` argument) puts it into a ``ToolRegistry``.
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from bridge.errors import InvalidDefinitionError
from bridge.tools.context import CallContext, Handler
from bridge.tools.definition import (
    Audit,
    Category,
    Confirmation,
    Execution,
    Requires,
    Routing,
    ToolDefinition,
)
from bridge.tools.registry import RegisteredTool, ToolRegistry

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """Schema details of one parameter, given as its default value: ``x: int = param(...)``."""

    default: Any = REQUIRED
    description: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    enum: tuple[Any, ...] | None = None
    min_items: int | None = None
    max_items: int | None = None
    examples: tuple[Any, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def param(
    default: Any = REQUIRED,
    *,
    description: str | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    min: float | None = None,
    max: float | None = None,
    exclusive_minimum: float | None = None,
    exclusive_maximum: float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
    format: str | None = None,
    enum: Sequence[Any] | None = None,
    min_items: int | None = None,
    max_items: int | None = None,
    examples: Sequence[Any] | None = None,
    **extra: Any,
) -> Any:
    """Describe a parameter; use as its default value in the tool function's signature."""
    return Param(
        default=default,
        description=description,
        minimum=minimum if minimum is not None else min,
        maximum=maximum if maximum is not None else max,
        exclusive_minimum=exclusive_minimum,
        exclusive_maximum=exclusive_maximum,
        min_length=min_length,
        max_length=max_length,
        pattern=pattern,
        format=format,
        enum=tuple(enum) if enum is not None else None,
        min_items=min_items,
        max_items=max_items,
        examples=tuple(examples) if examples is not None else None,
        extra=dict(extra),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A definition and the handler that implements it."""

    definition: ToolDefinition
    handler: Handler


def _json_type_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def schema_for_annotation(annotation: Any, where: str) -> tuple[dict[str, Any], bool]:
    """Return ``(schema, nullable)`` for a type annotation; raise for unsupported types."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}, False
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        nullable = len(members) != len(args)
        if len(members) == 1:
            inner, _ = schema_for_annotation(members[0], where)
        else:
            inner = {"anyOf": [schema_for_annotation(m, where)[0] for m in members]}
        return inner, nullable
    if origin is Literal:
        kinds = {_json_type_of(a) for a in args}
        schema: dict[str, Any] = {"enum": list(args)}
        if len(kinds) == 1 and None not in kinds:
            schema = {"type": kinds.pop(), "enum": list(args)}
        return schema, False
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        values = [m.value for m in annotation]
        kinds = {_json_type_of(v) for v in values}
        schema = {"enum": values}
        if len(kinds) == 1 and None not in kinds:
            schema = {"type": kinds.pop(), "enum": values}
        return schema, False
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if annotation in simple:
        return {"type": simple[annotation]}, False
    if annotation in (list, tuple, typing.List) or origin in (list, tuple, Sequence):  # noqa: UP006
        schema = {"type": "array"}
        if args and not (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
            if origin is tuple:
                schema["prefixItems"] = [schema_for_annotation(a, where)[0] for a in args]
                schema["items"] = False
            else:
                schema["items"] = schema_for_annotation(args[0], where)[0]
        elif args:
            schema["items"] = schema_for_annotation(args[0], where)[0]
        return schema, False
    if annotation in (dict, typing.Dict) or origin in (dict, Mapping):  # noqa: UP006
        schema = {"type": "object"}
        if len(args) == 2:
            if args[0] is not str:
                raise InvalidDefinitionError(f"{where}: object keys must be str")
            value_schema = schema_for_annotation(args[1], where)[0]
            if value_schema:
                schema["additionalProperties"] = value_schema
        return schema, False
    raise InvalidDefinitionError(
        f"{where}: unsupported annotation {annotation!r} "
        "(use str, int, float, bool, Literal, Enum, list, dict or X | None)"
    )


def _apply_param(schema: dict[str, Any], spec: Param) -> dict[str, Any]:
    out = dict(schema)
    if spec.description is not None:
        out["description"] = spec.description
    mapping = {
        "minimum": spec.minimum,
        "maximum": spec.maximum,
        "exclusiveMinimum": spec.exclusive_minimum,
        "exclusiveMaximum": spec.exclusive_maximum,
        "minLength": spec.min_length,
        "maxLength": spec.max_length,
        "pattern": spec.pattern,
        "format": spec.format,
        "minItems": spec.min_items,
        "maxItems": spec.max_items,
    }
    for key, value in mapping.items():
        if value is not None:
            out[key] = value
    if spec.enum is not None:
        out["enum"] = list(spec.enum)
    if spec.examples is not None:
        out["examples"] = list(spec.examples)
    out.update(spec.extra)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        out = dict(schema, type=[kind, "null"])
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    return {"anyOf": [schema, {"type": "null"}]}


def build_parameters(
    func: Callable[..., Any],
) -> tuple[dict[str, Any], str | None, tuple[str, ...]]:
    """Return ``(parameters schema, context parameter name, parameter names)`` for ``func``."""
    where = f"tool function '{func.__qualname__}'"
    try:
        hints = typing.get_type_hints(func, include_extras=False)
    except (NameError, TypeError) as err:
        raise InvalidDefinitionError(f"{where}: cannot read annotations: {err}") from err
    properties: dict[str, Any] = {}
    required: list[str] = []
    ctx_name: str | None = None
    names: list[str] = []
    for p in inspect.signature(func).parameters.values():
        annotation = hints.get(p.name, inspect.Parameter.empty)
        if annotation is CallContext:
            ctx_name = p.name
            continue
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise InvalidDefinitionError(f"{where}: *args/**kwargs cannot become parameters")
        if p.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise InvalidDefinitionError(f"{where}: positional-only parameter '{p.name}'")
        spec = (
            p.default
            if isinstance(p.default, Param)
            else Param(default=REQUIRED if p.default is inspect.Parameter.empty else p.default)
        )
        schema, nullable = schema_for_annotation(annotation, f"{where}, parameter '{p.name}'")
        schema = _apply_param(schema, spec)
        if nullable:
            schema = _nullable(schema)
        if spec.default is REQUIRED:
            if not nullable:
                required.append(p.name)
        elif spec.default is not None:
            schema["default"] = spec.default
        properties[p.name] = schema
        names.append(p.name)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    parameters["additionalProperties"] = False
    return parameters, ctx_name, tuple(names)


def _first_doc_line(func: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(func)
    if not doc:
        return None
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ").strip()


def tool(
    name: str | None = None,
    *,
    namespace: str = "core",
    version: str = "1.0.0",
    description: str | None = None,
    category: Category | str | None = None,
    requires: Iterable[str] = (),
    permissions: Iterable[str] = (),
    network: bool = False,
    gpu: bool = False,
    returns: dict[str, Any] | None = None,
    timeout_ms: int = 30_000,
    retries: int = 0,
    idempotent: bool = False,
    async_allowed: bool = False,
    prefer_local: bool = False,
    node_affinity: Iterable[str] = (),
    hop_limit: int = 3,
    tags: Iterable[str] = (),
    examples: Iterable[Mapping[str, Any]] = (),
    metadata: Mapping[str, Any] | None = None,
    dangerous: bool = False,
    confirmation: Confirmation | None = None,
    audit: Audit | None = None,
    registry: ToolRegistry | None = None,
) -> Callable[[F], F]:
    """Turn an async function into a tool; register it at once when ``registry`` is given.

    Raise ``InvalidDefinitionError`` if the function is not ``async`` or its
    signature cannot become a JSON Schema.
    """

    def decorate(func: F) -> F:
        candidate: Any = func  # keep ``func`` typed as F; the check below narrows otherwise
        if not inspect.iscoroutinefunction(candidate):
            raise InvalidDefinitionError(
                f"tool function '{func.__qualname__}' must be defined with 'async def'"
            )
        parameters, ctx_name, names = build_parameters(func)
        text = description or _first_doc_line(func)
        if not text:
            raise InvalidDefinitionError(
                f"tool function '{func.__qualname__}' needs a description or a docstring"
            )
        meta = dict(metadata or {})
        if tags:
            meta["tags"] = list(tags)
        if examples:
            meta["examples"] = [dict(e) for e in examples]
        defn = ToolDefinition(
            name=name or func.__name__,
            namespace=namespace,
            version=version,
            description=text,
            category=Category(category) if category is not None else None,
            parameters=parameters,
            returns=returns,
            requires=Requires(
                capabilities=tuple(requires),
                permissions=tuple(permissions),
                network=network,
                gpu=gpu,
            ),
            execution=Execution(
                timeout_ms=timeout_ms,
                retries=retries,
                idempotent=idempotent,
                async_allowed=async_allowed,
            ),
            routing=Routing(
                prefer_local=prefer_local, node_affinity=tuple(node_affinity), hop_limit=hop_limit
            ),
            metadata=meta,
            dangerous=dangerous,
            confirmation=confirmation,
            audit=audit or Audit(),
        )

        async def handler(params: dict[str, Any], ctx: CallContext) -> Any:
            kwargs = {k: params[k] for k in names if k in params}
            if ctx_name is not None:
                kwargs[ctx_name] = ctx
            return await func(**kwargs)

        spec = ToolSpec(definition=defn, handler=handler)
        func.__tool__ = spec  # type: ignore[attr-defined]
        if registry is not None:
            registry.register(defn, handler)
        return func

    return decorate


def spec_of(obj: Any) -> ToolSpec | None:
    """Return the ``ToolSpec`` a ``@tool`` function carries, or ``None``."""
    spec = getattr(obj, "__tool__", None)
    return spec if isinstance(spec, ToolSpec) else None


def register_tools(registry: ToolRegistry, *objects: Any) -> list[RegisteredTool]:
    """Register ``@tool`` functions, ``ToolSpec``s, or every ``@tool`` function of modules."""
    specs: list[ToolSpec] = []
    for obj in objects:
        if isinstance(obj, ToolSpec):
            specs.append(obj)
        elif isinstance(obj, types.ModuleType):
            specs.extend(s for v in vars(obj).values() if (s := spec_of(v)) is not None)
        else:
            spec = spec_of(obj)
            if spec is None:
                raise InvalidDefinitionError(f"{obj!r} is not a @tool function")
            specs.append(spec)
    return [registry.register(s.definition, s.handler) for s in specs]
