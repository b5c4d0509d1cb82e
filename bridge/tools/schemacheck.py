"""One message's JSON Schema as a check: the compiled yes-check, then ``jsonschema``'s words.

A ``SchemaCheck`` is made once per message type (``ToolRequest``, a spoken command, an
HTTP route's body) and used by every entrance that receives that message, so an HTTP
route, the call socket, MCP, the mesh and Wyoming refuse the same bad document with the
same error: its class's stable ``code`` and details ``{"reason": "schema", "path",
"keyword", …}`` naming the field at fault. The compiled check
(``bridge.tools.fastcheck``) proves a good document valid cheaply; only a document it
cannot prove is handed to ``jsonschema``, which finds and words the first problem.
``CheckedMessage`` is the base of such message types: ``from_json`` is the check, then
the conversion (``from_checked``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

import jsonschema

from bridge.errors import BridgeError, InvalidRequestError
from bridge.tools.fastcheck import Check, compile_check


class SchemaCheck:
    """A message schema and how a document off it is refused."""

    __slots__ = ("error_class", "proven", "schema", "validator", "what")

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        what: str = "request body",
        error_class: type[BridgeError] = InvalidRequestError,
    ) -> None:
        jsonschema.Draft202012Validator.check_schema(schema)
        self.schema = schema
        self.what = what
        self.error_class = error_class
        self.validator = jsonschema.Draft202012Validator(schema)
        self.proven: Check | None = compile_check(schema, {})  # formats annotate only

    def check(self, doc: Any) -> None:
        """Return when ``doc`` matches the schema; raise ``error_class`` naming the fault."""
        if self.proven is not None and self.proven(doc):
            return
        error = jsonschema.exceptions.best_match(self.validator.iter_errors(doc))
        if error is None:
            return
        path = [str(p) for p in error.absolute_path]
        where = "/" + "/".join(path)
        details: dict[str, Any] = {
            "reason": "schema",
            "path": where[:300],
            "keyword": str(error.validator),
        }
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            details["fields"] = sorted(str(k)[:64] for k in error.instance if k not in known)[:20]
            details["allowed"] = sorted(known)
        elif error.validator == "required" and isinstance(error.validator_value, list):
            missing = [
                f
                for f in error.validator_value
                if isinstance(error.instance, dict) and f not in error.instance
            ]
            details["field"] = ".".join([*path, *missing[:1]])
        elif path:
            # The top-level field at fault; ``path`` says where inside it.
            details["field"] = path[0][:300]
        raise self.error_class(
            f"{self.what} does not match the schema at {where[:200]}: {error.message[:300]}",
            details,
        )


class CheckedMessage:
    """A message type read through its one check: ``from_json`` checks, then converts.

    Subclasses set ``CHECK`` and write ``from_checked`` (conversion only); an entrance
    that already ran ``CHECK`` (an HTTP route, as it read the body) calls
    ``from_checked`` itself.
    """

    __slots__ = ()
    CHECK: ClassVar[SchemaCheck]

    @classmethod
    def from_json(cls, doc: Any) -> Self:
        """Parse the wire form; raise the check's error when ``doc`` is off the schema."""
        cls.CHECK.check(doc)
        return cls.from_checked(doc)

    @classmethod
    def from_checked(cls, doc: Mapping[str, Any]) -> Self:
        """Return the message of a wire form already checked against ``CHECK``."""
        raise NotImplementedError
