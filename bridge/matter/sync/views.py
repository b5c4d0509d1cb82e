"""Cluster tables that note what tool generation reads of each device.

A report outside what generation read cannot change any tool: it only updates the
cached value instead of rebuilding the node's tools.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from bridge.matter.home.devices import Device


class Reads:
    """What tool generation read of one device's attributes, while ``recording`` is on.

    ``values`` holds the (cluster, attribute) pairs whose value was looked at,
    ``keys`` the clusters whose presence or key set was looked at, ``everything`` is
    set when the whole cluster table was iterated. Generation is a function of what it
    reads: a report outside these sets cannot change any tool.
    """

    __slots__ = ("everything", "keys", "values")

    recording = False  # switched on by MatterToolSync._apply only, for every device at once

    def __init__(self) -> None:
        self.values: set[tuple[int, int]] = set()
        self.keys: set[int] = set()
        self.everything = False


class ClusterView(Mapping[int, Any]):
    """One cluster's attribute values, noting reads into a ``Reads``."""

    __slots__ = ("_cid", "_data", "_reads")

    def __init__(self, cid: int, data: dict[int, Any], reads: Reads) -> None:
        self._cid, self._data, self._reads = cid, data, reads

    def __getitem__(self, aid: int) -> Any:
        if Reads.recording:
            self._reads.values.add((self._cid, aid))
        return self._data[aid]

    def get(self, aid: int, default: Any = None) -> Any:
        """Return attribute ``aid``'s value (noted as read), else ``default``."""
        if Reads.recording:
            self._reads.values.add((self._cid, aid))
        return self._data.get(aid, default)

    def __contains__(self, aid: object) -> bool:
        if Reads.recording and isinstance(aid, int):
            self._reads.values.add((self._cid, aid))
        return aid in self._data

    def __iter__(self) -> Iterator[int]:
        if Reads.recording:
            self._reads.keys.add(self._cid)
        return iter(self._data)

    def __len__(self) -> int:
        if Reads.recording:
            self._reads.keys.add(self._cid)
        return len(self._data)


class ClustersView(Mapping[int, Mapping[int, Any]]):
    """A device's cluster table (cluster id → attribute values), noting reads."""

    __slots__ = ("_data", "_reads", "_views")

    def __init__(self, data: Mapping[int, Mapping[int, Any]], reads: Reads) -> None:
        # build_devices hands each device fresh dicts: take them over, copy anything else.
        self._data = {
            cid: attrs if isinstance(attrs, dict) else dict(attrs) for cid, attrs in data.items()
        }
        self._reads = reads
        self._views: dict[int, ClusterView] = {}

    def _view(self, cid: int) -> ClusterView:
        view = self._views.get(cid)
        if view is None:
            view = self._views[cid] = ClusterView(cid, self._data[cid], self._reads)
        return view

    def __getitem__(self, cid: int) -> Mapping[int, Any]:
        if Reads.recording:
            self._reads.keys.add(cid)
        if cid not in self._data:
            raise KeyError(cid)
        return self._view(cid)

    def get(self, cid: int, default: Any = None) -> Any:
        """Return cluster ``cid``'s recording view (noted as looked up), else ``default``."""
        if Reads.recording:
            self._reads.keys.add(cid)
        return self._view(cid) if cid in self._data else default

    def __contains__(self, cid: object) -> bool:
        if Reads.recording and isinstance(cid, int):
            self._reads.keys.add(cid)
        return cid in self._data

    def __iter__(self) -> Iterator[int]:
        if Reads.recording:
            self._reads.everything = True
        return iter(self._data)

    def __len__(self) -> int:
        if Reads.recording:
            self._reads.everything = True
        return len(self._data)

    def absorb(self, cid: int, aid: int, value: Any) -> bool:
        """Store a reported value unless a tool was built from it; return whether stored."""
        reads = self._reads
        attrs = self._data.get(cid)
        if reads.everything or attrs is None:
            return False  # a new cluster changes has_cluster(); rebuild
        if aid not in attrs:
            if cid in reads.keys or (cid, aid) in reads.values:
                return False
        elif (cid, aid) in reads.values and attrs[aid] != value:
            return False
        attrs[aid] = value
        return True


@contextlib.contextmanager
def reads_recorded() -> Iterator[None]:
    """Note what generation reads of the devices' cluster tables while inside."""
    Reads.recording = True
    try:
        yield
    finally:
        Reads.recording = False


def recording(device: Device) -> Device:
    """Return ``device`` with a cluster table that notes what generation reads of it."""
    if isinstance(device.clusters, ClustersView):
        return device
    return dataclasses.replace(device, clusters=ClustersView(device.clusters, Reads()))
