"""Re-sync: every device and tool rebuilt after a reconnect without stalling calls."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import time
from collections.abc import Callable, Sequence

from bridge.matter.home.devices import (
    Device,
    build_devices,
)
from bridge.matter.spec.models import (
    NodeData,
    gc_paused,
)
from bridge.matter.sync.state import SyncState
from bridge.matter.sync.views import reads_recorded, recording
from bridge.matter.tools.generator import (
    GeneratedTool,
)

LOGGER = logging.getLogger(__name__)
# A re-sync works for at most this long, then lets other work run for as long (a yield
# of one loop round is not enough: a call needs several rounds).
RESYNC_SLICE_S = 0.003


async def _in_slices[T](
    items: Sequence[T],
    step: Callable[[T], object],
    around: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> None:
    """Call ``step`` on each item, ``RESYNC_SLICE_S`` at a time, resting as long between."""
    index = 0
    while index < len(items):
        deadline = time.perf_counter() + RESYNC_SLICE_S
        with around():
            while index < len(items) and time.perf_counter() < deadline:
                step(items[index])
                index += 1
        if index < len(items):
            await asyncio.sleep(RESYNC_SLICE_S)


class Resyncing(SyncState):
    """A re-sync a slice at a time, superseded by any sync."""

    def start_resync(self) -> asyncio.Task[None] | None:
        """Start ``resync`` in the background (replacing one under way); return its task.

        Outside an event loop the registry is brought in line at once (``sync``).
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.sync()
            return None
        self._cancel_resync()
        self._dirty = set()
        task = loop.create_task(self._resync_body(), name="matter-resync")
        task.add_done_callback(self._resync_done)
        self._resync = task
        return task

    def _resync_done(self, task: asyncio.Task[None]) -> None:
        if task is self._resync:
            self._resync, self._dirty = None, None
        if not task.cancelled() and (err := task.exception()) is not None:
            # The registry keeps the tools it had; the next sync or reconnect tries again.
            LOGGER.error(
                "re-sync of the Matter devices failed; keeping the tools as they were", exc_info=err
            )

    def _cancel_resync(self) -> None:
        task, self._resync, self._dirty = self._resync, None, None
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()

    async def resync(self) -> None:
        """Run a re-sync (``start_resync``) and wait for it; a superseding sync ends it."""
        task = self.start_resync()
        if task is not None:
            await asyncio.wait([task])  # ended by a sync: not this caller's cancellation

    async def _resync_body(self) -> None:
        """Rebuild every device and tool from the adapter's nodes without stalling calls.

        The model is built in a worker thread from a copy of the nodes (the event loop
        only copies them); the device tools are generated on the loop a slice of at most
        ``RESYNC_SLICE_S`` at a time, other work running as long between slices; the
        shared and room tools and the registry change then land in one step. Until then the
        registry keeps the tools it had. A node reported on meanwhile is rebuilt from
        its latest state right after; a sync (a node added, a rename) supersedes it.
        """
        # The cyclic collector stays off for the whole re-sync (as for a sync): with it
        # on, the hundreds of thousands of objects a home's tools are made of set off
        # full collections between slices, each a stall of 50-120 ms on 1,000 devices.
        with gc_paused():
            devices = await self._resync_model()
            device_tools: list[GeneratedTool] = []
            await _in_slices(
                devices,
                lambda d: device_tools.extend(self.generator.device_tools(d)),
                reads_recorded,
            )
            # Which device tools are unchanged, compared against the registered ones a
            # slice at a time (most are, after a restart): the step below skips them.
            same: dict[str, GeneratedTool] = {}

            def compare(tool: GeneratedTool) -> None:
                old = self._tools.get(tool.definition.identity)
                if old is not None and old.definition == tool.definition:
                    same[tool.definition.identity] = old

            await _in_slices(device_tools, compare)
            dirty, self._dirty, self._resync = self._dirty or set(), None, None
            with reads_recorded():
                self._apply_recorded(devices, None, device_tools, same)
            # The home's new model and tools live until the next re-sync: out of the
            # cyclic collector with them (as `run` does with what start-up built), or the
            # first collection after the pause scans them all (a 20-40 ms stall on 1,000
            # devices). Reference counting still frees them when they are replaced.
            gc.freeze()
        for node_id in sorted(dirty):
            latest = self.adapter.node(node_id)
            if latest is not None:
                self.apply_node(latest)
        # The replaced tools are freed a slice at a time: dropping ~3,500 tools' schemas
        # at once was a stall of its own (20-40 ms on 1,000 devices).
        await _in_slices(tuple(same), same.pop)

    async def _resync_model(self) -> list[Device]:
        """Return every device, built in a worker thread from a copy of the nodes."""
        copies: list[NodeData] = []
        await _in_slices(
            self.adapter.nodes(),
            lambda node: copies.append(dataclasses.replace(node, attributes=dict(node.attributes))),
        )
        built = await asyncio.to_thread(build_devices, copies, dict(self._user_names))
        return [recording(d) for d in built]
