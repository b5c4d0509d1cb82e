"""The automations runner: a face whose "caller" is a rule, acting with the rule's own token.

It watches the event bus (``device.event``; ``device.state`` only while a rule has a
state trigger: a watched ``device.state`` makes every Matter call read its device back
before answering; ``tool_call.status`` only while a rule has a tool-call trigger: every
call publishes three of them, built only when someone listens) and a clock (time and
sun triggers), checks a rule's conditions and runs its actions: tool calls through the
one pipeline (``Invoker.invoke`` with the rule's token — permission checks,
confirmations by a person, rate limits and the audit of each call as for any caller),
delays and webhook notifications. Every run, acted or not, is an audit record (``tool =
automation:<id>``) holding its trigger and what each action did.

Safe running:
- a rule runs at most ``rate_limit_per_minute`` times a minute (further triggers are
  audited ``rate_limited``), one run of a rule at a time (``busy``), at most
  ``max_concurrent`` runs at once;
- a trigger caused by the rule's own last run (a device it acted on reporting within
  ``CYCLE_WINDOW_S``, or a call it made) counts as a re-trigger; after ``MAX_CHAIN`` in
  a row the rule is stopped (status ``stopped``) with an ``automation.stopped`` event.
  The same holds through other rules: every run carries its lineage (the rules whose
  runs led to it, through their calls or the devices they acted on), so rule A whose
  action triggers B whose action triggers A is a re-trigger of A (``A -> B -> A``);
  A device's report may come while the call that changed it is still answering (the
  bridge reads the state back before answering a watched call): such a trigger is
  judged when the run ends (the latest one), not dropped as ``busy``, so a cycle is
  counted the same whether the device answers before or after the call returns;
- time and sun triggers missed while the bridge was down are not replayed: the next
  instant is computed from the clock at start (and ``last_fired`` in SQLite keeps one
  instant from firing twice).

Authority: a rule is bound to the token that made it (its id, expiry and permissions),
and its own token never outlives that one. Before every run and every call the runner
checks that the creator's token is neither revoked (here or by a peer's notice) nor
expired and that the rule's permissions are still within it; when not, the rule is
``revoked`` for good (disabled, an audit row, an ``automation.stopped`` event) and its
own token is revoked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp

from bridge.auth.approvals import ApprovalStatus
from bridge.auth.audit import AuditEntry
from bridge.auth.permissions import PermissionChecker, covers
from bridge.auth.tokens import AgentToken, issue_token
from bridge.auth.visibility import may_read_device
from bridge.automations.bindings import BindingBackend, SwitchBindings, ToolFor
from bridge.automations.rules import HomePlace, Rule, compare, in_window, next_time
from bridge.automations.store import UNBOUND_REASON, RuleStore, Status, StoredRule
from bridge.automations.tools import binding_tools, rule_tools
from bridge.errors import (
    BridgeError,
    ConflictError,
    InvalidParamsError,
    NotFoundError,
    PermissionDeniedError,
    UnauthenticatedError,
)
from bridge.events import Event, EventBus, Subscription
from bridge.invocation.messages import RequestContext, ToolRequest
from bridge.invocation.pipeline import Pipeline
from bridge.limits import RULES_BOUND
from bridge.tools.context import Handler
from bridge.tools.definition import ToolDefinition
from bridge.tools.device_permissions import DEVICE_READ, device_permission
from bridge.tools.registry import ToolRegistry
from bridge.tools.validation import validate_call

LOGGER = logging.getLogger(__name__)

RULE_TOKEN_TTL_S = 365 * 86_400.0
CYCLE_WINDOW_S = 3.0
MAX_CHAIN = 3
# How many rules back a run's lineage reaches: a longer cycle is bounded by rate limits.
MAX_LINEAGE = 16
APPROVAL_TIMEOUT_S = 24 * 3600.0
NOTIFY_TIMEOUT_S = 5.0
MANAGE = "automations:manage"
CREATE = "automations:create"
READ = "automations:read"
NOTIFY = "automations:notify"  # webhook actions: the bridge sends HTTP where a rule says
# Who is home: reported per person (presence:report:<person>), read by rules and callers
# holding presence:read:<person> (a rule about anyone/nobody: presence:read:*).
PRESENCE_REPORT = "presence:report"
PRESENCE_READ = "presence:read"
# Words in a tool's tags or name that make a rule acting through it need approval.
_GUARDED = ("lock", "door", "garage", "gate")

StateReader = Callable[[str, str], Any]


@dataclass(slots=True)
class _Live:
    """What the runner keeps about one loaded rule between runs."""

    stored: StoredRule
    token: AgentToken | None
    runs: deque[float] = field(default_factory=lambda: deque(maxlen=600))
    busy: bool = False
    chain: int = 0
    # The rules whose runs led to this rule's latest run, itself last.
    lineage: tuple[str, ...] = ()
    # A trigger from a device the running run acts on, judged when the run ends, with
    # the lineage that caused it as it was when it came (the effect's window may have
    # passed by the time the run ends).
    deferred: tuple[dict[str, Any], tuple[str, ...]] | None = None
    state_truth: bool | None = None
    last_value: Any = None
    pending: asyncio.Task[None] | None = None
    next_at: float | None = None


class AutomationRunner:
    """Loads rules, watches triggers, runs actions with each rule's own token."""

    def __init__(
        self,
        *,
        pipeline: Pipeline,
        registry: ToolRegistry,
        events: EventBus,
        store: RuleStore,
        state_of: StateReader | None = None,
        clock: Callable[[], float] = time.time,
        tick_s: float = 1.0,
        max_concurrent: int = 8,
        home: HomePlace | None = None,
        people: tuple[str, ...] = (),
        bindings: BindingBackend | None = None,
        tool_for: ToolFor | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.registry = registry
        self.events = events
        self.store = store
        self.state_of = state_of
        self.clock = clock
        self.tick_s = tick_s
        self.home = home if home is not None else HomePlace()
        self.people = tuple(people)
        self._presence: dict[str, tuple[bool, float]] = {}
        self._slots = asyncio.Semaphore(max_concurrent)
        self._rules: dict[str, _Live] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sub: Subscription | None = None
        # device.state only while a rule has a state trigger: a watched device.state makes
        # every call read its device back before answering (read after write).
        self._state_sub: Subscription | None = None
        self._state_task: asyncio.Task[Any] | None = None
        # tool_call.status only while a rule has a tool-call trigger (three per call).
        self._call_sub: Subscription | None = None
        self._call_task: asyncio.Task[Any] | None = None
        self._checker = PermissionChecker()
        self._own_tools: list[str] = []
        self._unsubscribe_revocations: Callable[[], None] | None = None
        # device id -> (lineage of the run that last acted on it, until when its reports
        # count as that run's effect, monotonic)
        self._effects: dict[str, tuple[tuple[str, ...], float]] = {}
        # Matter bindings beside the rules (None without a Matter source).
        self.bindings: SwitchBindings | None = None
        if bindings is not None:
            self.bindings = SwitchBindings(
                pipeline=pipeline,
                events=events,
                backend=bindings,
                tool_for=tool_for or (lambda _capability, _device: None),
                spawn=self._spawn,
            )

    # -- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Load the stored rules, then watch the bus and the clock."""
        self._presence = {p: v for p, v in self.store.presence().items() if p in self.people}
        for stored in self.store.all():
            self._load(stored)
        self._unsubscribe_revocations = self.pipeline.verifier.revocations.subscribe(
            self._on_revocation
        )
        for live in self._sorted():
            self._check_authority(live)
        own = rule_tools(self)
        if self.bindings is not None:
            own += binding_tools(self.bindings, self.verify)
        for defn, handler in own:
            self._own_tools.append(self._register_own(defn, handler))
        self._sub = self.events.subscribe("device.event")
        self._spawn(self._watch(self._sub))
        self._watch_states()
        self._spawn(self._tick())

    def _register_own(self, defn: ToolDefinition, handler: Handler) -> str:
        """Register one of the runner's tools; return its identity.

        A peer's tool of the same identity may have been learnt while this runner was
        stopped (its own tools were gone, the mesh still ran): a local tool owns its whole
        name (docs/mesh.md), so it takes the place back. Any other clash is raised.
        """
        try:
            return self.registry.register(defn, handler).identity
        except ConflictError as err:
            held = self.registry.get(str(err.details.get("identity", "")))
            if held is None or not held.definition.server_name:
                raise
            return self.registry.replace(defn, handler).identity

    async def stop(self) -> None:
        """Stop watching and cancel running work."""
        if self._unsubscribe_revocations is not None:
            self._unsubscribe_revocations()
            self._unsubscribe_revocations = None
        for sub in (self._sub, self._state_sub, self._call_sub):
            if sub is not None:
                self.events.unsubscribe(sub)
        self._sub = self._state_sub = self._state_task = None
        self._call_sub = self._call_task = None
        while self._own_tools:
            self.registry.unregister(self._own_tools.pop())
        tasks, self._tasks = set(self._tasks), set()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _watch_states(self) -> None:
        """Watch ``device.state`` / ``tool_call.status`` while a rule has such a trigger."""
        kinds = {live.stored.rule.trigger["type"] for live in self._rules.values()}
        self._state_sub, self._state_task = self._follow(
            "device.state", "state" in kinds, self._state_sub, self._state_task
        )
        self._call_sub, self._call_task = self._follow(
            "tool_call.status", "tool_call" in kinds, self._call_sub, self._call_task
        )

    def _follow(
        self, prefix: str, needed: bool, sub: Subscription | None, task: asyncio.Task[Any] | None
    ) -> tuple[Subscription | None, asyncio.Task[Any] | None]:
        """Return ``prefix``'s subscription and watcher to keep, opened or closed as needed.

        Nothing opens before ``start`` or after ``stop``.
        """
        if needed and sub is None and self._sub is not None:
            sub = self.events.subscribe(prefix)
            return sub, self._spawn(self._watch(sub))
        if not needed and sub is not None:
            self.events.unsubscribe(sub)
            if task is not None:
                task.cancel()
            return None, None
        return sub, task

    def _load(self, stored: StoredRule) -> None:
        token = None
        try:
            raw = issue_token(
                self.pipeline.key,
                agent_id=stored.token_agent,
                permissions=stored.token_permissions,
                ttl_s=stored.token_ttl_s,
                now=stored.token_issued_at,
            )
            token = self.pipeline.verifier.verify(raw)
        except BridgeError as err:
            LOGGER.warning(
                "automation %s: its token is not usable: %s", stored.rule.id, err.message
            )
        live = _Live(stored=stored, token=token)
        self._rules[stored.rule.id] = live
        if stored.rule.trigger["type"] in ("time", "sun"):
            # From now on: an instant missed while the bridge was down is not replayed.
            since = max(self.clock(), stored.last_fired or 0.0)
            live.next_at = next_time(self.home.fill(stored.rule.trigger), since)
        if stored.status == Status.AWAITING_APPROVAL and stored.approval_id:
            self._spawn(self._await_approval(stored.rule.id, stored.approval_id))

    # -- management (called by the API, CLI and MCP faces) -----------------------------

    def verify(self, raw: str) -> AgentToken:
        """Return the verified token of a caller (raise ``UnauthenticatedError``)."""
        return self.pipeline.verifier.verify(raw)

    def visible(self, token: AgentToken, stored: StoredRule) -> bool:
        """Return whether ``token`` may see (and manage, with ``MANAGE``) a rule."""
        return stored.creator == token.agent_id or _holds(token, MANAGE) or _holds(token, READ)

    def rules(self, token: AgentToken) -> list[dict[str, Any]]:
        """Return the rules ``token`` may see."""
        return [
            self._view(live.stored) for live in self._sorted() if self.visible(token, live.stored)
        ]

    def get(self, token: AgentToken, rule_id: str) -> dict[str, Any]:
        """Return one rule; raise ``NotFoundError`` when absent or not visible."""
        return self._view(self._own(token, rule_id, write=False).stored)

    async def create(self, token: AgentToken, doc: Any) -> dict[str, Any]:
        """Create a rule from ``doc`` for the caller ``token``.

        Raise ``PermissionDeniedError`` without ``automations:create``, when the rule's
        permissions exceed the creator's or an action is beyond them;
        ``InvalidParamsError`` for a document the schema refuses; ``ConflictError`` for an
        id in use; ``ToolNotFoundError`` for an unknown action tool. A rule acting on locks
        or doors is stored ``awaiting_approval`` until a person approves it.
        """
        if not (_holds(token, CREATE) or _holds(token, MANAGE)):
            raise PermissionDeniedError(
                "creating rules needs the permission 'automations:create'", {"required": CREATE}
            )
        made = [live.stored.creator_token_id for live in self._rules.values()]
        if _holds(token, MANAGE):
            if len(made) >= RULES_BOUND.total:
                raise RULES_BOUND.node_error()
        else:
            RULES_BOUND.check(made, token.id)
        rule = Rule.from_json(doc)
        if rule.id in self._rules:
            raise ConflictError(f"a rule '{rule.id}' exists", {"rule": rule.id})
        for part in (rule.trigger, *rule.conditions):
            lacking = self.home.missing(part)
            if lacking is not None:
                what = "trigger" if part is rule.trigger else "condition"
                raise InvalidParamsError(
                    f"a {part['type']} {what} needs {lacking}", {"missing": lacking}
                )
            person = part.get("person")
            if part["type"] == "presence" and person is not None and person not in self.people:
                raise InvalidParamsError(
                    f"'{person}' is not one of automations.people", {"person": person}
                )
        permissions = self._rule_permissions(token, rule)
        self._check_reads(rule, permissions)
        guarded = self._check_actions(rule, permissions)
        if any(a["type"] == "notify" for a in rule.actions) and not _holds(token, NOTIFY):
            raise PermissionDeniedError(
                f"a rule that sends webhook notifications needs the permission '{NOTIFY}'",
                {"required": NOTIFY},
            )
        now = round(time.time(), 3)
        agent = f"automation:{rule.id}"
        # The rule's token never outlives its creator's, and is recorded as issued by it
        # (revoking the creator's token revokes it with what else that token issued).
        ttl = min(RULE_TOKEN_TTL_S, token.expires_at - now)
        if ttl <= 0:  # inside the expiry skew: still accepted, but nothing may outlive it
            raise UnauthenticatedError("token has expired", {"reason": "expired"})
        raw = issue_token(
            self.pipeline.key, agent_id=agent, permissions=permissions, ttl_s=ttl, now=now
        )
        self.pipeline.tokens.record_sync(raw, issued_by=token.id)
        stored = StoredRule(
            rule=rule,
            status=Status.ACTIVE,
            creator=token.agent_id,
            token_agent=agent,
            token_permissions=tuple(permissions),
            token_issued_at=now,
            token_ttl_s=ttl,
            created_at=now,
            creator_token_id=token.id,
            creator_expires_at=token.expires_at,
            creator_permissions=tuple(token.permissions),
        )
        if guarded:
            approval = await self.pipeline.approvals.request(
                call_id=f"rule-{rule.id}-{uuid.uuid4().hex[:8]}",
                tool=f"automation:{rule.id}",
                agent_id=token.agent_id,
                params={"rule": rule.to_json()},
                message=(
                    f"Allow the rule '{rule.name}' (by {token.agent_id}) to act through "
                    f"{', '.join(guarded)}?"
                ),
                required=1,
                timeout_s=APPROVAL_TIMEOUT_S,
                # Bound to the creator's token: revoked or expired, the request ends too.
                token=token,
            )
            stored = replace(
                stored,
                status=Status.AWAITING_APPROVAL,
                approval_id=approval.id,
                reason="acts on a lock or door: waits for a person's approval",
            )
        self.store.put(stored)
        self._load(stored)
        self._watch_states()
        self._publish("automation.rule", stored, {"change": "created"})
        return self._view(stored)

    def set_enabled(self, token: AgentToken, rule_id: str, enabled: bool) -> dict[str, Any]:
        """Enable or disable a rule (enabling a stopped one restarts it)."""
        live = self._own(token, rule_id, write=True)
        stored = live.stored
        if stored.status == Status.REVOKED:
            raise ConflictError(
                f"the rule '{rule_id}' was revoked ({stored.reason}): create it again",
                {"rule": rule_id, "status": stored.status},
            )
        status = Status.ACTIVE if enabled and stored.status == Status.STOPPED else stored.status
        stored = replace(
            stored,
            rule=replace(stored.rule, enabled=enabled),
            status=status,
            reason=None if status == Status.ACTIVE else stored.reason,
        )
        self._save(live, stored)
        live.chain = 0
        self._publish("automation.rule", stored, {"change": "enabled" if enabled else "disabled"})
        return self._view(stored)

    def delete(self, token: AgentToken, rule_id: str) -> dict[str, Any]:
        """Delete a rule and revoke its token."""
        live = self._own(token, rule_id, write=True)
        self.store.delete(rule_id)
        self._rules.pop(rule_id, None)
        self._watch_states()
        if live.pending is not None:
            live.pending.cancel()
        if live.token is not None:
            with contextlib.suppress(BridgeError):
                self.pipeline.revoke(live.token.id)
        self._publish("automation.rule", live.stored, {"change": "deleted"})
        return {"id": rule_id, "deleted": True}

    async def test(self, token: AgentToken, rule_id: str) -> dict[str, Any]:
        """Return what the rule would do now: its conditions' results; nothing is acted on."""
        live = self._own(token, rule_id, write=False)
        failed = self._failed_condition(live.stored.rule)
        return {
            "id": rule_id,
            "status": live.stored.status,
            "enabled": live.stored.rule.enabled,
            "would_act": failed is None and self._runnable(live) is None,
            "blocked_by": failed or self._runnable(live),
            "actions": list(live.stored.rule.actions),
        }

    def runs(self, token: AgentToken, rule_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """Return the rule's last runs from the audit log, newest first."""
        self._own(token, rule_id, write=False)
        entries = self.pipeline.audit.query_sync(tool=f"automation:{rule_id}", limit=limit)
        return [e.to_json() for e in entries]

    def _view(self, stored: StoredRule) -> dict[str, Any]:
        live = self._rules.get(stored.rule.id)
        return {
            **stored.to_json(),
            "devices": self.devices(stored.rule.id),
            "next_at": live.next_at if live is not None else None,
        }

    def _own(self, token: AgentToken, rule_id: str, *, write: bool) -> _Live:
        live = self._rules.get(rule_id)
        if live is None or not self.visible(token, live.stored):
            raise NotFoundError(f"no rule '{rule_id[:64]}'", {"rule": rule_id[:64]})
        if write and live.stored.creator != token.agent_id and not _holds(token, MANAGE):
            raise PermissionDeniedError(
                "only its creator or 'automations:manage' may change a rule", {"required": MANAGE}
            )
        return live

    def _rule_permissions(self, token: AgentToken, rule: Rule) -> list[str]:
        if rule.permissions is None:
            own = [p for p in token.permissions if not p.startswith("automations:")]
            return own or ["none:none"]
        beyond = [p for p in rule.permissions if not any(covers(g, p) for g in token.permissions)]
        if beyond:
            raise PermissionDeniedError(
                "a rule's permissions must be a subset of its creator's", {"beyond": beyond[:16]}
            )
        return list(rule.permissions)

    def _check_reads(self, rule: Rule, permissions: list[str]) -> None:
        """Refuse a trigger or condition on a device the rule's token may not read.

        Its runs' audit records say what a condition saw: they must not show a device
        its creator could not read.
        """
        for part in (rule.trigger, *rule.conditions):
            if part["type"] == "presence":
                wanted = f"{PRESENCE_READ}:{part.get('person', '*')}"
                if not any(covers(p, wanted) for p in permissions):
                    raise PermissionDeniedError(
                        "the rule may not watch who is home: its creator may not read it",
                        {"required": wanted},
                    )
            device = part.get("device_id")
            if isinstance(device, str) and not may_read_device(permissions, device):
                raise PermissionDeniedError(
                    f"the rule may not watch device {device}: its creator may not read it",
                    {"required": device_permission(DEVICE_READ, device)},
                )

    def _check_actions(self, rule: Rule, permissions: list[str]) -> list[str]:
        """Refuse actions the rule's token may not take; return tools needing approval."""
        guarded: list[str] = []
        for action in rule.actions:
            if action["type"] != "call":
                continue
            defn = self.registry.resolve(action["tool"]).definition
            # With the tool's defaults applied, as the pipeline checks a call: a
            # permission template may name a parameter the rule leaves to its default
            # (the generic Matter tool's ``device:{access}:{device_id}``).
            params = validate_call(defn, action.get("params", {}))
            if not self._checker.allows(permissions, defn.requires.permissions, params):
                raise PermissionDeniedError(
                    f"the rule may not call '{action['tool']}' with these parameters: "
                    "its creator may not",
                    {"tool": action["tool"]},
                )
            tags = [str(t).lower() for t in defn.metadata.get("tags", ())]
            words = " ".join([defn.name.lower(), *tags])
            if defn.dangerous or defn.confirmation is not None or any(w in words for w in _GUARDED):
                guarded.append(defn.identity)
        return guarded

    async def _await_approval(self, rule_id: str, approval_id: str) -> None:
        try:
            final = await self.pipeline.approvals.wait(approval_id)
        except NotFoundError:
            final = None
        live = self._rules.get(rule_id)
        if live is None or live.stored.status != Status.AWAITING_APPROVAL:
            return  # deleted, or revoked with its creator's token meanwhile
        approved = final is not None and final.status is ApprovalStatus.APPROVED
        status = Status.ACTIVE if approved else Status.REFUSED
        reason = None if approved else f"approval {final.status.value if final else 'lost'}"
        stored = replace(live.stored, status=status, reason=reason)
        self._save(live, stored)
        self._publish("automation.rule", stored, {"change": status})

    def _save(self, live: _Live, stored: StoredRule) -> None:
        live.stored = stored
        self.store.put(stored)

    def _sorted(self) -> list[_Live]:
        return [self._rules[k] for k in sorted(self._rules)]

    # -- who is home ------------------------------------------------------------------

    def presence(self, token: AgentToken) -> dict[str, Any]:
        """Return the presence of each configured person ``token`` may read."""
        shown: dict[str, Any] = {}
        for person in self.people:
            if _holds(token, f"{PRESENCE_READ}:{person}"):
                home, since = self._presence.get(person, (None, None))
                shown[person] = {"home": home, "since": since}
        return {"people": shown}

    def report_presence(self, token: AgentToken, person: str, home: bool) -> dict[str, Any]:
        """Record that ``person`` is home (or away) and fire the presence rules it meets.

        Raise ``NotFoundError`` for a person not in ``automations.people`` and
        ``PermissionDeniedError`` without ``presence:report:<person>``.
        """
        if person not in self.people:
            raise NotFoundError(
                f"'{person[:32]}' is not one of automations.people", {"person": person[:32]}
            )
        if not _holds(token, f"{PRESENCE_REPORT}:{person}"):
            raise PermissionDeniedError(
                f"reporting {person}'s presence needs the permission '{PRESENCE_REPORT}:{person}'",
                {"required": f"{PRESENCE_REPORT}:{person}"},
            )
        was_anyone = self._is_home(None)
        was = self._presence.get(person, (None, 0.0))[0]
        if was is home:
            return {"person": person, "home": home, "since": self._presence[person][1]}
        now = time.time()
        self._presence[person] = (home, now)
        self.store.set_presence(person, home, now)
        anyone = self._is_home(None)
        for live in tuple(self._rules.values()):
            trigger = live.stored.rule.trigger
            if trigger["type"] != "presence" or trigger["home"] is not home:
                continue
            who = trigger.get("person")
            if who == person or (who is None and anyone is home and was_anyone is not home):
                self._fire(live, {"type": "presence", "person": person, "home": home, "at": now})
        return {"person": person, "home": home, "since": now}

    def _is_home(self, person: str | None) -> bool | None:
        """Return whether ``person`` (``None``: anyone) is home; ``None`` when unknown."""
        if person is not None:
            known = self._presence.get(person)
            return None if known is None else known[0]
        if not self._presence:
            return None
        return any(home for home, _ in self._presence.values())

    # -- authority --------------------------------------------------------------------

    def _authority_lost(self, live: _Live) -> str | None:
        """Return why the rule may no longer act on its creator's authority, or ``None``."""
        stored = live.stored
        if (
            stored.creator_token_id is None
            or stored.creator_expires_at is None
            or stored.creator_permissions is None
        ):
            return UNBOUND_REASON
        state = self.pipeline.verifier.state(stored.creator_token_id, stored.creator_expires_at)
        if state != "valid":
            return f"its creator's token {stored.creator_token_id} is {state}"
        if live.token is None:
            return "its own token is not usable"
        own = self.pipeline.verifier.state(live.token.id, live.token.expires_at)
        if own != "valid":
            return f"its own token {live.token.id} is {own}"
        beyond = [
            p
            for p in live.token.permissions
            if not any(covers(g, p) for g in stored.creator_permissions)
        ]
        if beyond:
            return f"its permissions {beyond[:4]} exceed its creator's token's"
        return None

    def _check_authority(self, live: _Live) -> bool:
        """Return whether the rule may act; revoke it for good when it may not."""
        if live.stored.status in (Status.REVOKED, Status.REFUSED):
            return False
        reason = self._authority_lost(live)
        if reason is None:
            return True
        self._revoke_rule(live, reason)
        return False

    def _revoke_rule(self, live: _Live, reason: str) -> None:
        """Disable the rule for good, audit and announce why, and revoke its own token."""
        stored = replace(
            live.stored,
            rule=replace(live.stored.rule, enabled=False),
            status=Status.REVOKED,
            reason=reason,
        )
        self._save(live, stored)
        if live.pending is not None:
            live.pending.cancel()
            live.pending = None
        run_id = f"run-{uuid.uuid4().hex[:16]}"
        self._audit(
            live,
            run_id,
            {"type": "authority", "at": time.time()},
            "revoked",
            "error",
            {"reason": reason, "creator_token_id": stored.creator_token_id},
        )
        self._publish("automation.stopped", stored, {"reason": reason, "run_id": run_id})
        if live.token is not None and live.token.id not in self.pipeline.verifier.revocations:
            with contextlib.suppress(BridgeError):
                self.pipeline.revoke(live.token.id)
        self._watch_states()

    def _on_revocation(self, notice: dict[str, Any]) -> None:
        """Revoke the rules made by (or running with) a token just revoked."""
        revoked = notice.get("token_id")
        for live in tuple(self._rules.values()):
            own = live.token.id if live.token is not None else None
            if revoked in (live.stored.creator_token_id, own):
                self._check_authority(live)

    # -- triggers ---------------------------------------------------------------------

    async def _watch(self, sub: Subscription) -> None:
        while True:
            event = await sub.get()
            try:
                self._on_event(event)
            except Exception:
                LOGGER.exception("automations: handling %s failed", event.type)

    def _on_event(self, event: Event) -> None:
        data = event.data
        for live in tuple(self._rules.values()):
            trigger = live.stored.rule.trigger
            kind = trigger["type"]
            if event.type == "device.event" and kind == "device_event":
                if (
                    data.get("device_id") == trigger["device_id"]
                    and data.get("event") == trigger["event"]
                    and (
                        "count" not in trigger
                        or data.get("fields", {}).get("count") == trigger["count"]
                    )
                ):
                    self._fire(
                        live,
                        {
                            "type": "device_event",
                            "device_id": data["device_id"],
                            "event": data["event"],
                            "fields": data.get("fields"),
                            "at": event.ts,
                        },
                    )
            elif event.type == "device.state" and kind == "state":
                if (
                    data.get("device_id") == trigger["device_id"]
                    and data.get("path") == trigger["path"]
                ):
                    self._on_state(live, data.get("value"), event.ts)
            elif event.type == "tool_call.status" and kind == "tool_call":
                status = data.get("status")
                called = str(data.get("tool"))
                if trigger["tool"] in (called, called.split("@", 1)[0]) and status == trigger.get(
                    "status", "completed"
                ):
                    self._fire(
                        live,
                        {
                            "type": "tool_call",
                            "tool": data.get("tool"),
                            "status": status,
                            "agent_id": data.get("agentId"),
                            "at": event.ts,
                        },
                    )

    def _on_state(self, live: _Live, value: Any, at: float) -> None:
        trigger = live.stored.rule.trigger
        if not any(k in trigger for k in ("equals", "above", "below")):
            # No comparison: every change of the value fires.
            if live.state_truth is None or live.last_value != value:
                live.state_truth, live.last_value = True, value
                self._fire(
                    live,
                    {
                        "type": "state",
                        "device_id": trigger["device_id"],
                        "path": trigger["path"],
                        "value": value,
                        "at": at,
                    },
                )
            return
        truth = compare(trigger, value)
        was, live.state_truth = live.state_truth, truth
        if not truth:
            if live.pending is not None:
                live.pending.cancel()
                live.pending = None
            return
        if was:
            return  # still true: only the change from false to true fires
        info = {
            "type": "state",
            "device_id": trigger["device_id"],
            "path": trigger["path"],
            "value": value,
            "at": at,
        }
        hold = trigger.get("for_s", 0)
        if not hold:
            self._fire(live, info)
            return

        async def after_hold() -> None:
            await asyncio.sleep(hold)
            live.pending = None
            self._fire(live, {**info, "held_s": hold})

        live.pending = self._spawn(after_hold())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            try:
                self._tick_once()
            except Exception:
                LOGGER.exception("automations: a clock tick failed")

    def _tick_once(self) -> None:
        now = self.clock()
        mono = time.monotonic()
        for device in [d for d, (_, until) in self._effects.items() if until < mono]:
            del self._effects[device]
        wall = time.time() - self.pipeline.verifier.clock_skew_s
        for live in tuple(self._rules.values()):
            # A creator's token that expired since the last tick ends its rules now
            # (revocations come as notices: _on_revocation).
            stored = live.stored
            if stored.status in (
                Status.ACTIVE,
                Status.AWAITING_APPROVAL,
                Status.STOPPED,
            ) and wall >= min(
                stored.creator_expires_at or 0.0, live.token.expires_at if live.token else 0.0
            ):
                self._check_authority(live)
            due = live.next_at
            if due is None or now < due:
                continue
            trigger = live.stored.rule.trigger
            live.next_at = next_time(self.home.fill(trigger), now)  # missed ones skipped
            self.store.set_fired(live.stored.rule.id, due)
            live.stored = replace(live.stored, last_fired=due)
            self._fire(
                live,
                {
                    "type": trigger["type"],
                    "scheduled": due,
                    "at": now,
                    **({"event": trigger["event"]} if "event" in trigger else {}),
                },
            )

    # -- runs -------------------------------------------------------------------------

    def _runnable(self, live: _Live) -> str | None:
        stored = live.stored
        if not stored.rule.enabled:
            return "disabled"
        if stored.status != Status.ACTIVE:
            return stored.status
        if live.token is None:
            return "token unusable"
        return None

    def _fire(
        self, live: _Live, trigger: dict[str, Any], cause: tuple[str, ...] | None = None
    ) -> None:
        """Judge one trigger of ``live``: run it, defer it, or record why not.

        ``cause`` is the lineage that caused the trigger, found when it came; ``None``
        looks it up now.
        """
        blocked = self._runnable(live)
        if blocked is not None:
            return  # a disabled or unapproved rule does not run (and is not a run)
        if not self._check_authority(live):
            return  # its creator's token is gone: revoked now, audited once
        rule = live.stored.rule
        run_id = f"run-{uuid.uuid4().hex[:16]}"
        now = time.monotonic()
        if cause is None:
            cause = self._cause(trigger, now)
        looped = rule.id in cause
        if live.busy and trigger["type"] != "tool_call" and looped:
            if live.deferred is not None:  # the latest one is judged; this one is a record
                self._audit(
                    live,
                    run_id,
                    live.deferred[0],
                    "busy",
                    "error",
                    {"reason": "a later report of the run's own effect replaced it"},
                )
            live.deferred = (trigger, cause)  # the run's own effect: judged once it ends
            return
        if looped:
            live.chain += 1
            # A call the rule's run led to is a certain cycle; a report from a device it
            # acted on may be a person's doing, so only MAX_CHAIN in a row stop it.
            if live.chain >= MAX_CHAIN or trigger["type"] == "tool_call":
                between = cause[cause.index(rule.id) + 1 :]
                through = f" through rule {' -> '.join(between)}" if between else ""
                reason = (
                    f"cycle: its own actions triggered it again{through} ({live.chain} "
                    f"in a row, last trigger {trigger['type']})"
                )
                self._save(live, replace(live.stored, status=Status.STOPPED, reason=reason))
                self._audit(
                    live,
                    run_id,
                    trigger,
                    "cycle_stopped",
                    "error",
                    {"reason": reason, "lineage": [*cause, rule.id]},
                )
                self._publish(
                    "automation.stopped",
                    live.stored,
                    {"reason": reason, "run_id": run_id, "lineage": [*cause, rule.id]},
                )
                return
            cause = cause[cause.index(rule.id) + 1 :]  # the loop's turn since its last run
        else:
            live.chain = 0
        while live.runs and now - live.runs[0] > 60:
            live.runs.popleft()
        if len(live.runs) >= rule.rate_limit_per_minute:
            self._audit(
                live,
                run_id,
                trigger,
                "rate_limited",
                "error",
                {"limit_per_minute": rule.rate_limit_per_minute},
            )
            return
        if live.busy:
            self._audit(
                live,
                run_id,
                trigger,
                "busy",
                "error",
                {"reason": "the rule's previous run is still going"},
            )
            return
        live.runs.append(now)
        live.busy = True
        live.lineage = (*cause, rule.id)[-MAX_LINEAGE:]
        self._spawn(self._run(live, run_id, trigger))

    def _cause(self, trigger: dict[str, Any], now: float) -> tuple[str, ...]:
        """Return the lineage of the run that caused ``trigger`` (empty: nobody's run)."""
        if trigger["type"] == "tool_call":
            agent = str(trigger.get("agent_id"))
            maker = (
                self._rules.get(agent.removeprefix("automation:"))
                if agent.startswith("automation:")
                else None
            )
            if maker is None or maker.stored.token_agent != agent:
                return ()
            return maker.lineage
        effect = self._effects.get(str(trigger.get("device_id")))
        if effect is None or now > effect[1]:
            return ()
        return effect[0]

    def _acted(self, device: str, lineage: tuple[str, ...], *, until: float | None = None) -> None:
        """Mark ``device`` as acted on by a run of ``lineage`` until ``until`` (monotonic).

        By default for the next CYCLE_WINDOW_S; ``math.inf`` while a call on it is under way.
        """
        ends = time.monotonic() + CYCLE_WINDOW_S if until is None else until
        self._effects[device] = (lineage, ends)

    def _target(self, action: dict[str, Any]) -> str | None:
        """Return the device a call action acts on: its ``device_id`` or its tool's device."""
        if action["type"] != "call":
            return None
        device = action.get("params", {}).get("device_id")
        if isinstance(device, str):
            return device
        entry = self.registry.get(action["tool"])
        if entry is None:
            with contextlib.suppress(BridgeError):
                entry = self.registry.resolve(action["tool"])
        meta = entry.definition.metadata.get("device") if entry is not None else None
        found = meta.get("id") if isinstance(meta, dict) else None
        return found if isinstance(found, str) else None

    def devices(self, rule_id: str) -> list[str]:
        """Return the devices a rule watches or acts on."""
        live = self._rules.get(rule_id)
        if live is None:
            return []
        rule = live.stored.rule
        found = {*rule.devices(), *(self._target(a) for a in rule.actions)}
        return sorted(d for d in found if d is not None)

    def _failed_condition(self, rule: Rule) -> dict[str, Any] | None:
        for condition in rule.conditions:
            if condition["type"] == "time_window":
                if not in_window(self.home.fill(condition), self.clock()):
                    return {**condition, "why": "outside the time window"}
            elif condition["type"] == "presence":
                seen = self._is_home(condition.get("person"))
                if seen is not condition["home"]:
                    who = condition.get("person", "anyone")
                    said = "unknown" if seen is None else ("home" if seen else "away")
                    return {**condition, "why": f"presence of {who} is {said}"}
            else:
                value = (
                    self.state_of(condition["device_id"], condition["path"])
                    if self.state_of is not None
                    else None
                )
                if not compare(condition, value):
                    return {**condition, "why": f"the value is {value!r}"}
        return None

    async def _run(self, live: _Live, run_id: str, trigger: dict[str, Any]) -> None:
        rule = live.stored.rule
        done: list[dict[str, Any]] = []
        acted: set[str] = set()
        lineage = live.lineage
        decision, outcome = "allowed", "completed"
        try:
            async with self._slots:
                failed = self._failed_condition(rule)
                if failed is not None:
                    decision = "conditions_not_met"
                    done.append({"condition": failed})
                    return
                for action in rule.actions:
                    device = self._target(action)
                    if device is not None:
                        # Its report may come before the call answers, however long the
                        # call takes (a loaded controller): from now until CYCLE_WINDOW_S
                        # after it answers.
                        acted.add(device)
                        self._acted(device, lineage, until=math.inf)
                    step = await self._act(live, run_id, action)
                    done.append(step)
                    if device is not None:
                        self._acted(device, lineage)
                    if not step.get("ok", True):
                        outcome = "error"
                        break
        except asyncio.CancelledError:
            outcome = "error"
            done.append({"cancelled": True})
            live.deferred = None
            raise
        finally:
            for device in acted:  # the window runs from the run's end (or cancellation)
                self._acted(device, lineage)
            live.busy = False
            self._audit(live, run_id, trigger, decision, outcome, {"actions": done})
            self._publish(
                "automation.run",
                live.stored,
                {
                    "run_id": run_id,
                    "trigger": trigger,
                    "decision": decision,
                    "outcome": outcome,
                    "actions": done,
                },
            )
            deferred, live.deferred = live.deferred, None
            if deferred is not None:
                self._fire(live, *deferred)

    async def _act(self, live: _Live, run_id: str, action: dict[str, Any]) -> dict[str, Any]:
        kind = action["type"]
        if kind == "delay":
            await asyncio.sleep(action["seconds"])
            return {"type": "delay", "seconds": action["seconds"], "ok": True}
        if kind == "notify":
            return await self._notify(live, run_id, action)
        lost = (
            self._authority_lost(live)
            if live.stored.status != Status.REVOKED
            else live.stored.reason
        )
        if lost is not None or live.token is None:
            # Checked again before every call: a delay may outlast the creator's token.
            if lost is not None:
                self._check_authority(live)
            return {
                "type": "call",
                "tool": action["tool"],
                "ok": False,
                "error": "AUTHORITY_REVOKED",
                "reason": lost,
            }
        request = ToolRequest(
            tool=action["tool"],
            params=dict(action.get("params", {})),
            context=RequestContext(agent_id=live.token.agent_id, trace_id=run_id),
        )
        response = await self.pipeline.invoker.invoke(request, token=live.token)
        step: dict[str, Any] = {
            "type": "call",
            "tool": action["tool"],
            "ok": response.ok,
            "call_id": response.call_id,
        }
        if not response.ok and response.problem is not None:
            step["error"] = response.problem.code
        return step

    async def _notify(self, live: _Live, run_id: str, action: dict[str, Any]) -> dict[str, Any]:
        body = {"rule": live.stored.rule.id, "run_id": run_id, "message": action["message"]}
        try:
            timeout = aiohttp.ClientTimeout(total=NOTIFY_TIMEOUT_S)
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(action["url"], json=body, allow_redirects=False) as resp,
            ):
                return {"type": "notify", "ok": resp.status < 300, "status": resp.status}
        except (aiohttp.ClientError, TimeoutError, OSError) as err:
            return {"type": "notify", "ok": False, "error": type(err).__name__}

    def _audit(
        self,
        live: _Live,
        run_id: str,
        trigger: dict[str, Any],
        decision: str,
        outcome: str,
        details: dict[str, Any],
    ) -> None:
        self.pipeline.audit.record(
            AuditEntry(
                call_id=run_id,
                agent_id=live.stored.token_agent,
                tool=f"automation:{live.stored.rule.id}",
                decision=decision,
                outcome=outcome,
                trace_id=run_id,
                details={"trigger": trigger, **details},
            )
        )

    def _publish(self, kind: str, stored: StoredRule, data: dict[str, Any]) -> None:
        self.events.publish(
            kind,
            {"rule": stored.rule.id, "creator": stored.creator, "status": stored.status, **data},
        )


def _holds(token: AgentToken, permission: str) -> bool:
    return any(covers(g, permission) for g in token.permissions)
