"""The spoken-command message: a sentence to run, its language and the speaker's room.

``{"text": "turn off the kitchen lights", "language": "en", "area": "Kitchen"}`` is
what ``POST /v1/intents/handle`` takes and what a Wyoming transcript is turned into
before it is forwarded there. Its one schema (``SPOKEN_COMMAND_SCHEMA``) and check
(``SpokenCommand.CHECK``) are the only place its limits are written: the route checks
a body with it as it is read, and the voice engine trusts the ``SpokenCommand`` it is
handed. A command off the schema is ``INVALID_PARAMS`` (400) with the field at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from bridge.errors import InvalidParamsError
from bridge.tools.schemacheck import CheckedMessage, SchemaCheck

MAX_TEXT = 500
MAX_AREA = 64
MAX_LANGUAGE = 16

SPOKEN_COMMAND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["text"],
    "additionalProperties": False,
    "properties": {
        # At least one character that is not white space.
        "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT, "pattern": r"\S"},
        "language": {
            "type": "string",
            "minLength": 2,
            "maxLength": MAX_LANGUAGE,
            "default": "en",
            "description": "en, de, fr, es or nl (tags like de-DE work)",
        },
        "area": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_AREA,
            "description": "The speaker's room (name or alias): sentences without a "
            "place act there",
        },
    },
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SpokenCommand(CheckedMessage):
    """A sentence to recognise and run, in ``language``, said in ``area`` (if known)."""

    text: str
    language: str = "en"
    area: str | None = None

    CHECK: ClassVar[SchemaCheck] = SchemaCheck(
        SPOKEN_COMMAND_SCHEMA, what="spoken command", error_class=InvalidParamsError
    )

    @classmethod
    def from_checked(cls, doc: Mapping[str, Any]) -> Self:
        """Return the command of a wire form already checked against its schema."""
        return cls(text=doc["text"], language=doc.get("language", "en"), area=doc.get("area"))

    def to_json(self) -> dict[str, Any]:
        """Return the wire form (no ``area`` when none is known)."""
        doc: dict[str, Any] = {"text": self.text, "language": self.language}
        if self.area is not None:
            doc["area"] = self.area
        return doc
