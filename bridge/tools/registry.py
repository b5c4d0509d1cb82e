"""The node's tool registry: every tool this node knows, local or offered by a peer.

``ToolRegistry`` holds ``RegisteredTool`` entries (definition, handler, availability)
keyed by identity ``namespace:name@version`` for O(1) lookup, with secondary indexes by
``namespace:name`` (for version resolution) and by bare name (for namespace
resolution and ambiguity errors). Every change is reported to subscribers and, when an
``EventBus`` is given, published as ``registry.changed``.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bridge.errors import (
    AmbiguousToolError,
    ConflictError,
    ToolNotFoundError,
)
from bridge.events import EventBus
from bridge.tools.context import Handler
from bridge.tools.definition import Category, ToolDefinition
from bridge.tools.identity import ToolRef, Version, VersionConstraint, make_key
from bridge.tools.search import SearchIndex

_LOGGER = logging.getLogger(__name__)

Action = Literal["added", "updated", "removed"]
Subscriber = Callable[[Action, "RegisteredTool"], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredTool:
    """A definition with its local handler (``None`` for a peer's tool) and availability."""

    definition: ToolDefinition
    handler: Handler | None
    available: bool = True

    @property
    def identity(self) -> str:
        """Return the definition's identity."""
        return self.definition.identity

    @property
    def key(self) -> str:
        """Return the definition's ``namespace:name``."""
        return self.definition.key


RESOLVED_CACHE_SIZE = 4096


class ToolRegistry:
    """Register, resolve, list and search tools; notify subscribers of every change."""

    def __init__(self, events: EventBus | None = None) -> None:
        self._events = events
        self._by_identity: dict[str, RegisteredTool] = {}
        self._versions: dict[str, dict[Version, str]] = {}  # key -> version -> identity
        self._namespaces: dict[str, dict[str, int]] = {}  # name -> namespace -> entries
        self._subscribers: list[Subscriber] = []
        self._index = SearchIndex()
        # Resolved references (``dim``, ``matter:lamp_on@^1``) -> identity, for calls
        # without a separate version; emptied by every registration change. Bounded.
        self._resolved: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._by_identity)

    def __contains__(self, identity: object) -> bool:
        return identity in self._by_identity

    # -- changes ----------------------------------------------------------------------

    def register(
        self, defn: ToolDefinition, handler: Handler | None, *, available: bool = True
    ) -> RegisteredTool:
        """Add a tool; raise ``ConflictError`` if its identity is already registered."""
        clash = self._same_version(defn)
        if clash is not None:
            raise ConflictError(f"tool '{clash}' is already registered", {"identity": clash})
        entry = RegisteredTool(definition=defn, handler=handler, available=available)
        self._insert(entry)
        self._notify("added", entry)
        return entry

    def replace(
        self, defn: ToolDefinition, handler: Handler | None, *, available: bool = True
    ) -> RegisteredTool:
        """Add a tool or replace the one with the same identity."""
        clash = self._same_version(defn)
        existed = clash is not None
        if clash is not None:
            self._remove(clash)
        entry = RegisteredTool(definition=defn, handler=handler, available=available)
        self._insert(entry)
        self._notify("updated" if existed else "added", entry)
        return entry

    def unregister(self, identity: str) -> bool:
        """Remove the tool with exactly this identity; return whether it existed."""
        entry = self._remove(identity)
        if entry is None:
            return False
        self._notify("removed", entry)
        return True

    def set_available(self, identity: str, available: bool) -> RegisteredTool:
        """Mark a tool (un)available; raise ``ToolNotFoundError`` if it is unknown."""
        entry = self._by_identity.get(identity)
        if entry is None:
            raise ToolNotFoundError(f"tool '{identity}' is not registered", {"tool": identity})
        if entry.available == available:
            return entry
        updated = RegisteredTool(
            definition=entry.definition, handler=entry.handler, available=available
        )
        self._by_identity[identity] = updated
        self._notify("updated", updated)
        return updated

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(action, tool)`` on every change; return a function that unsubscribes."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    # -- lookups ----------------------------------------------------------------------

    def get(self, identity: str) -> RegisteredTool | None:
        """Return the tool with exactly this ``namespace:name@version`` identity, or ``None``."""
        return self._by_identity.get(identity)

    def resolve(self, ref: str, version: str | None = None) -> RegisteredTool:
        """Return the highest version matching ``[namespace:]name[@constraint]`` and ``version``.

        Raise ``InvalidRequestError`` for a malformed reference, ``AmbiguousToolError``
        when a bare name exists in several namespaces (the candidates are listed) and
        ``ToolNotFoundError`` when nothing matches.
        """
        exact = self._by_identity.get(ref)
        if exact is not None and version is None:
            return exact
        if version is None:
            known = self._resolved.get(ref)
            if known is not None:
                return self._by_identity[known]
        found = self._resolve(ref, version)
        if version is None:
            if len(self._resolved) >= RESOLVED_CACHE_SIZE:
                self._resolved.clear()
            self._resolved[ref] = found.definition.identity
        return found

    def _resolve(self, ref: str, version: str | None) -> RegisteredTool:
        parsed = ToolRef.parse(ref)
        namespace = parsed.namespace
        if namespace is None:
            namespaces = self._namespaces.get(parsed.name)
            if not namespaces:
                raise ToolNotFoundError(f"no tool named '{ref}'", {"tool": ref})
            if len(namespaces) > 1:
                # A peer's tool (no handler here) never makes a local name ambiguous.
                local = [ns for ns in namespaces if self._has_local(make_key(ns, parsed.name))]
                if len(local) == 1:
                    namespaces = {local[0]: 1}
                elif local:
                    namespaces = dict.fromkeys(local, 1)
            if len(namespaces) > 1:
                candidates = sorted(make_key(ns, parsed.name) for ns in namespaces)
                raise AmbiguousToolError(
                    f"tool name '{parsed.name}' is ambiguous; use one of: {', '.join(candidates)}",
                    {"tool": ref, "candidates": candidates},
                )
            namespace = next(iter(namespaces))
        key = make_key(namespace, parsed.name)
        versions = self._versions.get(key)
        if not versions:
            raise ToolNotFoundError(f"no tool named '{ref}'", {"tool": ref})
        if len(versions) > 1 and self._has_local(key):
            # A local tool owns its whole name: no peer version of it is ever picked.
            versions = {
                v: i for v, i in versions.items() if self._by_identity[i].handler is not None
            }
        constraints = [
            VersionConstraint.parse(text) for text in (parsed.version, version) if text is not None
        ]
        best: Version | None = None
        if constraints:
            for v in versions:
                if all(c.matches(v) for c in constraints) and (best is None or v > best):
                    best = v
        else:
            # Unconstrained: the newest release; a pre-release only if nothing else exists.
            releases = [v for v in versions if not v.prerelease]
            best = max(releases or versions)
        if best is None:
            wanted = " and ".join(str(c) for c in constraints)
            available = sorted(versions)
            raise ToolNotFoundError(
                f"no version of '{key}' matches {wanted}; registered: "
                + ", ".join(str(v) for v in available),
                {"tool": ref, "version": wanted, "versions": [str(v) for v in available]},
            )
        return self._by_identity[versions[best]]

    def list(
        self,
        namespace: str | None = None,
        server_name: str | None = None,
        capability: str | None = None,
        category: Category | str | None = None,
        tag: str | None = None,
        available: bool | None = None,
    ) -> builtins.list[RegisteredTool]:
        """Return the tools matching every given filter, sorted by key then version."""
        out = []
        for entry in self._by_identity.values():
            d = entry.definition
            if namespace is not None and d.namespace != namespace:
                continue
            if server_name is not None and d.server_name != server_name:
                continue
            if capability is not None and capability not in d.requires.capabilities:
                continue
            if category is not None and (d.category is None or d.category.value != category):
                continue
            if tag is not None and tag not in d.tags:
                continue
            if available is not None and entry.available != available:
                continue
            out.append(entry)
        out.sort(key=lambda e: (e.key, e.definition.semver))
        return out

    def discover(self, query: str, limit: int = 10) -> builtins.list[tuple[RegisteredTool, float]]:
        """Return up to ``limit`` tools ranked by relevance of ``query``, best first."""
        return [
            (self._by_identity[identity], score)
            for identity, score in self._index.search(query, limit)
        ]

    # -- internals --------------------------------------------------------------------

    def _has_local(self, key: str) -> bool:
        """Return whether some version of ``key`` has a handler on this node."""
        return any(
            self._by_identity[i].handler is not None for i in self._versions.get(key, {}).values()
        )

    def _same_version(self, defn: ToolDefinition) -> str | None:
        """Return the identity already registered for ``defn``'s key and version."""
        if defn.identity in self._by_identity:
            return defn.identity
        return self._versions.get(defn.key, {}).get(defn.semver)

    def _insert(self, entry: RegisteredTool) -> None:
        self._resolved.clear()
        d = entry.definition
        self._by_identity[d.identity] = entry
        self._versions.setdefault(d.key, {})[d.semver] = d.identity
        per_name = self._namespaces.setdefault(d.name, {})
        per_name[d.namespace] = per_name.get(d.namespace, 0) + 1
        self._index.add(d.identity, d)

    def _remove(self, identity: str) -> RegisteredTool | None:
        self._resolved.clear()
        entry = self._by_identity.pop(identity, None)
        if entry is None:
            return None
        d = entry.definition
        versions = self._versions.get(d.key)
        if versions is not None:
            versions.pop(d.semver, None)
            if not versions:
                del self._versions[d.key]
        per_name = self._namespaces.get(d.name)
        if per_name is not None:
            left = per_name.get(d.namespace, 0) - 1
            if left > 0:
                per_name[d.namespace] = left
            else:
                per_name.pop(d.namespace, None)
            if not per_name:
                del self._namespaces[d.name]
        self._index.remove(identity)
        return entry

    def _notify(self, action: Action, entry: RegisteredTool) -> None:
        if self._events is not None:
            self._events.publish(
                "registry.changed",
                {"action": action, "identity": entry.identity, "available": entry.available},
                subject=entry.definition,  # who may see the tool's name (not sent)
            )
        for callback in tuple(self._subscribers):
            try:
                callback(action, entry)
            except Exception:
                # A broken subscriber must not break registration for everyone else.
                _LOGGER.exception("registry subscriber %r failed on %s", callback, action)
