"""The voice component: the intent engine, and the Wyoming service when configured."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bridge.voice.intents import IntentEngine
from bridge.voice.planner import ToolFor

if TYPE_CHECKING:
    from bridge.config import BridgeConfig
    from bridge.invocation.invoker import Invoker
    from bridge.matter import Device, Room
    from bridge.tools.registry import ToolRegistry
    from bridge.voice.floors import FloorLike


class VoiceComponent:
    """Own the intent engine (and the Wyoming server) for the service's lifetime."""

    def __init__(self, engine: IntentEngine) -> None:
        self.engine = engine

    @classmethod
    def build(
        cls,
        config: BridgeConfig,
        registry: ToolRegistry,
        invoker: Invoker,
        devices: Callable[[], Sequence[Device]],
        rooms: Callable[[], Sequence[Room]] | None = None,
        *,
        tool_for: ToolFor,
        floors: Callable[[], Sequence[FloorLike]] | None = None,
    ) -> VoiceComponent:
        """Return the component for ``config`` (``tool_for`` answers which tool does what).

        ``floors`` reads the home model's floors (which ``voice.floors`` seeds); without
        it the configured floors are used as they are.
        """
        units = config.voice.units
        if units == "auto" and config.matter.temperature_unit.upper() == "F":
            units = "imperial"  # the tools speak Fahrenheit: so does the home
        engine = IntentEngine(
            registry=registry,
            invoker=invoker,
            devices=devices,
            rooms=rooms,
            tool_for=tool_for,
            units=units,
            floors=floors if floors is not None else config.voice.floors,
        )
        return cls(engine)

    async def start(self) -> None:
        """Start serving spoken commands."""

    async def stop(self) -> None:
        """Stop following the registry."""
        self.engine.close()
