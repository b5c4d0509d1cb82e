"""The one call pipeline, from replay check to audit record.

One module because the pipeline's steps share one per-call state (``_State``) from
parsing to the audit record.
Details: docs/modules.md, ``bridge.invocation.invoker``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bridge.auth.approvals import ApprovalStatus, ApprovalStore
from bridge.auth.audit import AuditEntry, AuditLog
from bridge.auth.permissions import PermissionChecker
from bridge.auth.ratelimit import RateLimiter
from bridge.auth.tokens import AgentToken, TokenVerifier
from bridge.auth.visibility import may_see
from bridge.errors import (
    BridgeError,
    ConfirmationDeniedError,
    ConfirmationRequiredError,
    ConfirmationTimeoutError,
    DeviceUnavailableError,
    HopLimitExceededError,
    InternalError,
    InvalidRequestError,
    NoCapableNodeError,
    PermissionDeniedError,
    StorageFullError,
    ToolFailedError,
    ToolNotFoundError,
    ToolTimeoutError,
    UnauthenticatedError,
)
from bridge.events import EventBus
from bridge.invocation.calls import CallTracker, ToolCall
from bridge.invocation.idempotency import IdempotencyStore
from bridge.invocation.messages import (
    ExecutionInfo,
    ReplayGuard,
    ToolRequest,
    ToolResponse,
)
from bridge.limits import IN_FLIGHT_BOUND, InFlight
from bridge.tools.context import CallContext, new_call_id
from bridge.tools.definition import Category, Confirmation, ToolDefinition, ToolIntent
from bridge.tools.redaction import REDACTED, Redactor
from bridge.tools.registry import RegisteredTool, ToolRegistry
from bridge.tools.validation import validate_call, validator_for

_LOG = logging.getLogger(__name__)
# The longest parameter value an approval's message quotes (the params show it whole).
MESSAGE_VALUE_CHARS = 120
# Visibility answers the invoker keeps (tools called lately, per token's grants).
SEEN_MAX = 256
_TEMPLATE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


# A call that lasted longer than this has its token checked again before its result goes.
RECHECK_S = 1.0


def _withheld_when_revoked(defn: ToolDefinition) -> bool:
    """Whether a result is withheld from a token that went bad while the call ran.

    Yes for what a call reads or computes; no for an action (its effect happened: say so).
    """
    return defn.intent is not ToolIntent.ACTION and defn.category is not Category.ACTING


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteOutcome:
    """What a remote node answered: its result or its error, and where it ran."""

    result: Any = None
    error: BridgeError | None = None
    execution: ExecutionInfo | None = None


class RemoteExecutor(Protocol):
    """Runs a tool that lives on another node (implemented by the mesh router)."""

    async def execute(
        self,
        tool: RegisteredTool,
        params: dict[str, Any],
        context: CallContext,
        request: ToolRequest,
    ) -> RemoteOutcome:
        """Run the call remotely and return what the executing node answered.

        An error the executing node reported comes back in ``RemoteOutcome.error``
        (with the execution); raise ``BridgeError`` when the call could not be routed.
        """
        ...


# Set by a caller that must know when its call starts waiting for a person (the voice
# face answers "I have asked for approval" only then); called with the approval's id.
APPROVAL_WAITING: ContextVar[Callable[[str], None] | None] = ContextVar(
    "approval_waiting", default=None
)


def _unknown_tool(ref: str) -> ToolNotFoundError:
    """Return the registry's answer for a name it does not know."""
    return ToolNotFoundError(f"no tool named '{ref}'", {"tool": ref})


def confirmation_for(defn: ToolDefinition) -> Confirmation | None:
    """Return the tool's confirmation rule (a dangerous tool without one needs ``always``)."""
    if defn.confirmation is not None:
        return defn.confirmation
    if defn.dangerous:
        return Confirmation(mode="always", message=f"Allow {defn.key}?")
    return None


def confirmation_needed(rule: Confirmation, params: dict[str, Any]) -> bool:
    """Return whether ``params`` need confirmation under ``rule``."""
    if rule.mode == "when" and rule.when is not None:
        return not validator_for(rule.when).errors(params)
    return True


def fill_message(template: str, params: dict[str, Any]) -> str:
    """Fill ``{param}`` placeholders with the values quoted; unknown names stay as written.

    Each value is written as a JSON literal (strings in double quotes, with quotes,
    newlines and control characters escaped) and cut at ``MESSAGE_VALUE_CHARS``, so a
    caller's text can never read as the bridge's own words to the approver:
    ``Unlock {door}?`` with a door named ``front (already approved, safe)`` reads
    ``Unlock "front (already approved, safe)"?``.
    """

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in params:
            return match.group(0)
        text = json.dumps(params[name], ensure_ascii=False, default=str)
        if len(text) > MESSAGE_VALUE_CHARS:
            text = text[: MESSAGE_VALUE_CHARS - 2] + ('…"' if text.startswith('"') else "…")
        return text

    return _TEMPLATE.sub(value, template)


class Invoker:
    """Run calls through the pipeline and return ``ToolResponse``s."""

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        verifier: TokenVerifier,
        node_id: str,
        events: EventBus | None = None,
        audit: AuditLog | None = None,
        approvals: ApprovalStore | None = None,
        idempotency: IdempotencyStore | None = None,
        rate_limiter: RateLimiter | None = None,
        replay: ReplayGuard | None = None,
        remote: RemoteExecutor | None = None,
        base_backoff_s: float = 0.05,
        max_backoff_s: float = 2.0,
    ) -> None:
        self.registry = registry
        self.verifier = verifier
        self.node_id = node_id
        self.audit = audit
        self.approvals = approvals
        self.idempotency = idempotency
        self.rate_limiter = rate_limiter or RateLimiter()
        self.in_flight = InFlight(IN_FLIGHT_BOUND)
        self.replay = replay or ReplayGuard(clock_skew_s=verifier.clock_skew_s)
        self.remote = remote
        self.checker = PermissionChecker()
        self.calls = CallTracker(events)
        self.base_backoff_s = base_backoff_s
        self.max_backoff_s = max_backoff_s
        # Calls between the start and the end of ``invoke``, and a count of the event
        # loop's turns in which calls started: a call that waited (its start's turn is
        # over) and runs alone commits its audit row itself; calls that start and end in
        # one turn (a burst) or overlap leave theirs to the writer's group commit.
        self._running = 0
        self._turn = 0
        self._turn_counted = False
        # may_see's answers for the tools called lately, by (grants, definition object):
        # both are immutable, and the entry holds the definition so its id stays its own.
        self._seen: dict[tuple[tuple[str, ...], int], tuple[ToolDefinition, bool]] = {}

    def set_remote_executor(self, remote: RemoteExecutor | None) -> None:
        """Set who runs tools registered without a local handler."""
        self.remote = remote

    def admit_job(self, request: ToolRequest, token: AgentToken) -> None:
        """Refuse to run ``request`` in the background unless the token and the tool allow it.

        The job is charged to the token's rate limit here (its run is not charged again):
        raise ``RateLimitedError`` when the token's bucket is empty (audited).
        Raise ``PermissionDeniedError`` when the token may not make the call (audited as
        ``denied``).
        Raise ``InvalidRequestError`` (and record the refusal in the audit log) when the
        tool's ``execution.async_allowed`` is false. A tool that does not resolve is let
        through: the job's call reports that through the pipeline like any other call.
        """
        try:
            self.charge(token)
        except BridgeError as limited:
            self._audit_refusal(request, token, request.tool, "rate_limited", limited)
            raise
        try:
            entry = self.registry.resolve(request.tool, request.version)
        except BridgeError:
            return
        if not may_see(token.permissions, entry.definition):
            return  # as for an unknown tool: the job's call answers TOOL_NOT_FOUND
        try:
            # Permission before the 202: a job is never accepted for a call that would be denied.
            self.checker.check(
                token.permissions, entry.definition.requires.permissions, request.params
            )
        except BridgeError as denied:
            self._audit_refusal(request, token, entry.identity, "denied", denied)
            raise
        if entry.definition.execution.async_allowed:
            return
        err = InvalidRequestError(
            f"tool '{entry.identity}' does not allow asynchronous invocation "
            "(execution.async_allowed is false); invoke it synchronously",
            {"tool": entry.identity, "reason": "async_not_allowed"},
        )
        self._audit_refusal(request, token, entry.identity, "async_not_allowed", err)
        raise err

    def _audit_refusal(
        self, request: ToolRequest, token: AgentToken, tool: str, decision: str, err: BridgeError
    ) -> None:
        if self.audit is not None:
            self.audit.record(
                AuditEntry(
                    call_id=new_call_id(),
                    agent_id=token.agent_id,
                    token_id=token.id,
                    tool=tool,
                    decision=decision,
                    outcome="error",
                    error_code=err.code.value,
                    node_id=self.node_id,
                    trace_id=request.context.trace_id,
                    details={"message": err.message},
                )
            )

    def charge(self, token: AgentToken) -> None:
        """Take one call from ``token``'s rate limit (keyed on its id); raise when empty."""
        if token.constraints.rate_limit_per_minute is not None:
            self.rate_limiter.acquire(token.id, token.constraints.rate_limit_per_minute)

    def authenticate(self, raw: str | None) -> AgentToken:
        """Verify a raw token; raise ``UnauthenticatedError`` when absent or invalid."""
        if not raw:
            raise UnauthenticatedError("a token is required", {"reason": "missing"})
        return self.verifier.verify(raw)

    async def invoke(
        self, request: ToolRequest, *, token: AgentToken | None = None, charged: bool = False
    ) -> ToolResponse:
        """Run ``request`` through the pipeline and return its response (errors included).

        ``charged``: the token's rate limit was already charged for this call (a job).
        """
        self._running += 1
        if not self._turn_counted:
            self._turn_counted = True
            asyncio.get_running_loop().call_soon(self._next_turn)
        try:
            return await self._invoke(request, token, charged, self._turn)
        finally:
            self._running -= 1

    def _next_turn(self) -> None:
        self._turn += 1
        self._turn_counted = False

    async def _invoke(
        self, request: ToolRequest, token: AgentToken | None, charged: bool, turn: int
    ) -> ToolResponse:
        started = time.perf_counter()
        call_id = new_call_id()
        # Only a verified identity goes on the bus; a claimed context.agent_id is not one.
        call = self.calls.initiated(
            call_id, request.tool, token.agent_id if token else None, token.id if token else None
        )
        state = _State()
        state.charged = charged
        try:
            response = await self._run(request, token, call_id, call, state, started)
        except BridgeError as err:
            response = self._fail(request, call_id, call, state, err, started)
        except Exception:  # a bug in a pipeline step must not reach the caller
            _LOG.exception("internal error in call %s", call_id)
            internal = InternalError("internal error", {"call_id": call_id})
            response = self._fail(request, call_id, call, state, internal, started)
        except asyncio.CancelledError:
            self._cancelled(request, call_id, call, state, started)
            raise
        finally:
            if state.seat is not None:
                self.in_flight.release(state.seat)
        if state.committed is not None:
            alone = self._running == 1 and self._turn != turn
            if alone and not state.committed.done() and self.audit is not None:
                self.audit.commit_now()  # nothing to group it with: no turn to wait
            # Acknowledge only what the audit log holds: a crash from here on loses nothing.
            try:
                await asyncio.shield(state.committed)
            except Exception as err:  # disk full, file gone (logged once per batch)
                failed = _audit_failure(err, call_id)
                response = ToolResponse.failure(
                    request,
                    call_id,
                    response.tool,
                    failed,
                    response.duration_ms,
                    self.node_id,
                    response.execution,
                )
        return response

    async def _run(
        self,
        request: ToolRequest,
        token: AgentToken | None,
        call_id: str,
        call: ToolCall,
        state: _State,
        started: float,
    ) -> ToolResponse:
        state.token = token
        if token is None:
            token = self.authenticate(request.token)
            call = call.but(agent_id=token.agent_id, token_id=token.id)
        else:
            # Verified earlier (an open socket, an MCP session): still valid now?
            self.verifier.check(token)
        # Request ids are unique per token: one token cannot use up another's ids.
        self.replay.check(request.id, request.timestamp, agent_id=token.id)
        state.token = token
        self.in_flight.take(token.id)  # RATE_LIMITED past the token's calls at once
        state.seat = token.id
        self._check_constraints(token, request)
        entry = self.registry.resolve(request.tool, request.version)
        defn = entry.definition
        if not self._may_see(token.permissions, defn):
            # A tool the token may not see answers as an unknown one does (no oracle of
            # which names exist); the audit row still says it was denied.
            state.decision = "permission_denied"
            raise _unknown_tool(request.tool)
        state.tool = entry
        # From here on, errors, events and records must not carry the call's secrets.
        state.redactor = Redactor.for_call(defn, request.params)
        params = validate_call(defn, request.params)
        state.redactor = Redactor.for_call(defn, request.params, params)
        state.params = params
        self.checker.check(token.permissions, defn.requires.permissions, params)

        key = request.idempotency_key
        fp = ""
        if key is not None and self.idempotency is not None:
            fp = self.idempotency.fingerprint(defn.identity, params)
            # Stored outcomes belong to the token that made them, not to an agent name.
            stored = await self._idempotent_lookup(token.id, key, fp)
            if stored is not None:
                state.decision = "idempotent_replay"
                response = replace(ToolResponse.from_json(stored), request_id=request.id)
                self._record(request, response, state, started)
                if response.ok:
                    self.calls.completed(call.but(tool=defn.identity), response.result)
                elif response.problem is not None:
                    self.calls.failed(call, response.problem)
                return response
            state.idem_key = key
        try:
            if not state.charged:
                self.charge(token)
            await self._confirm(defn, params, token, call_id, state)
            _ensure_available(entry)
            state.decision = "allowed"
            call = self.calls.running(call.but(tool=defn.identity))
            context = CallContext(
                call_id=call_id,
                agent_id=token.agent_id,
                token_id=token.id,
                session_id=request.context.session_id,
                trace_id=request.context.trace_id,
                node_id=self.node_id,
                token=token.raw or request.token,
                permissions=token.permissions,
                hop_budget=request.routing.hop_budget,
                path=request.routing.path,
                idempotency_key=key,
                allowed_nodes=token.constraints.allowed_nodes,
                max_hops=token.constraints.max_hops,
            )
            try:
                result = await self._execute(entry, params, context, request, token, state)
            except BridgeError:
                state.executed_error = True
                raise
            if _withheld_when_revoked(defn) and time.perf_counter() - started > RECHECK_S:
                # A result that was waited for (an event wait, a long read) goes only to a
                # token still good now: one revoked or expired meanwhile gets the refusal.
                # An action's effect has happened, so its caller is told the truth.
                self.verifier.check(token)
            scrubbed = state.redactor.scrub(result)
            # The JSON text checked after the handler ran is the result's, unless scrubbed.
            result_json = state.result_json if scrubbed is result else None
            result = scrubbed
            response = ToolResponse.success(
                request,
                call_id,
                defn.identity,
                result,
                round((time.perf_counter() - started) * 1000, 3),
                self.node_id,
                state.execution,
                result_json,
            )
        except BridgeError as err:
            response = self._fail(request, call_id, call, state, err, started)
            await self._idempotent_end(token.id, state, fp, response)
            return response
        except BaseException:
            if state.idem_key is not None and self.idempotency is not None:
                self.idempotency.end(token.id, state.idem_key, None)
            raise
        self.calls.completed(call, result, result_json=result_json)
        self._record(request, response, state, started)
        await self._idempotent_end(token.id, state, fp, response)
        return response

    def _may_see(self, granted: tuple[str, ...], defn: ToolDefinition) -> bool:
        key = (granted, id(defn))
        known = self._seen.get(key)
        if known is not None and known[0] is defn:
            return known[1]
        seen = may_see(granted, defn)
        if len(self._seen) >= SEEN_MAX:
            self._seen.clear()
        self._seen[key] = (defn, seen)
        return seen

    def _check_constraints(self, token: AgentToken, request: ToolRequest) -> None:
        cons = token.constraints
        if cons.allowed_nodes and self.node_id not in cons.allowed_nodes:
            raise PermissionDeniedError(
                "token is not valid on this node", {"node_id": self.node_id}
            )
        if cons.max_hops is not None and len(request.routing.path) > cons.max_hops:
            raise HopLimitExceededError(
                f"call took {len(request.routing.path)} hops; token allows {cons.max_hops}",
                {"hops": len(request.routing.path), "max_hops": cons.max_hops},
            )

    async def _idempotent_lookup(self, agent_id: str, key: str, fp: str) -> dict[str, Any] | None:
        assert self.idempotency is not None  # noqa: S101 - checked by the caller
        while True:
            inflight = self.idempotency.inflight(agent_id, key)
            if inflight is None:
                break
            try:
                return await asyncio.shield(inflight)
            except asyncio.CancelledError:
                if not inflight.cancelled():
                    raise
                # The first call ended without a storable outcome: run again.
        self.idempotency.begin(agent_id, key)
        try:
            stored = await self.idempotency.lookup(agent_id, key, fp)
        except BaseException:
            self.idempotency.end(agent_id, key, None)
            raise
        if stored is not None:
            self.idempotency.end(agent_id, key, stored)
        return stored

    async def _idempotent_end(
        self, agent_id: str, state: _State, fp: str, response: ToolResponse
    ) -> None:
        if state.idem_key is None or self.idempotency is None:
            return
        storable = response.ok or (
            state.executed_error and not bool((response.error or {}).get("retryable"))
        )
        doc = response.to_json() if storable else None
        try:
            if doc is not None:
                await self.idempotency.store(agent_id, state.idem_key, fp, doc)
        finally:
            self.idempotency.end(agent_id, state.idem_key, doc)

    async def _confirm(
        self,
        defn: ToolDefinition,
        params: dict[str, Any],
        token: AgentToken,
        call_id: str,
        state: _State,
    ) -> None:
        rule = confirmation_for(defn)
        if rule is None or not confirmation_needed(rule, params):
            return
        # The approver sees the message and params without the call's secrets.
        secret = state.redactor.names
        message = fill_message(
            rule.message or f"Allow {defn.key}?",
            {k: REDACTED if k in secret else v for k, v in params.items()},
        )
        shown = state.redactor.params(params)
        if self.approvals is None:
            raise ConfirmationRequiredError(
                f"'{defn.identity}' needs confirmation and this node takes no approvals",
                {"message": message},
            )
        approval = await self.approvals.request(
            call_id=call_id,
            tool=defn.identity,
            agent_id=token.agent_id,
            params=shown,
            message=message,
            required=rule.multi_party,
            timeout_s=rule.timeout_s,
            token=token,
        )
        state.approval_id = approval.id
        waiting = APPROVAL_WAITING.get()
        if waiting is not None:
            waiting(approval.id)
        final = await self.approvals.wait(approval.id)
        details = {"approval_id": approval.id, "message": message}
        state.votes = [
            {"approver": v.approver, "token_id": v.token_id or "", "decision": v.decision.value}
            for v in final.votes
        ]
        # The call waited: its authority is checked again now, not where it was first seen.
        self.verifier.check(token)
        if final.status is ApprovalStatus.APPROVED:
            valid = self.approvals.valid_approvers(final)
            state.approvers = [v.approver for v in valid]
            if len(valid) < final.required:
                raise ConfirmationDeniedError(
                    f"call to '{defn.identity}' lost its approval: an approver's token was "
                    "revoked or expired before the call ran",
                    {
                        **details,
                        "reason": "approver_token_invalid",
                        "valid_approvers": len(valid),
                        "required": final.required,
                    },
                )
            return
        if final.status is ApprovalStatus.DENIED:
            raise ConfirmationDeniedError(f"call to '{defn.identity}' was denied", details)
        if final.status is ApprovalStatus.CANCELLED:
            raise ConfirmationDeniedError(
                f"call to '{defn.identity}' was cancelled ({final.reason})",
                {**details, "reason": final.reason},
            )
        raise ConfirmationTimeoutError(
            f"call to '{defn.identity}' was not approved within {rule.timeout_s:g} s", details
        )

    async def _execute(
        self,
        entry: RegisteredTool,
        params: dict[str, Any],
        context: CallContext,
        request: ToolRequest,
        token: AgentToken,
        state: _State,
    ) -> Any:
        defn = entry.definition
        safe = defn.execution.idempotent or request.idempotency_key is not None
        attempts = 1 + (max(0, defn.execution.retries) if safe else 0)
        per_attempt_s = defn.execution.timeout_ms / 1000.0
        overall: float | None = None
        if request.routing.timeout_ms is not None:
            overall = time.monotonic() + request.routing.timeout_ms / 1000.0
        attempt = 0
        while True:
            attempt += 1
            budget = per_attempt_s
            if overall is not None:
                budget = min(budget, overall - time.monotonic())
            if budget <= 0:
                raise ToolTimeoutError(
                    f"'{defn.identity}' ran out of time", {"timeout_ms": request.routing.timeout_ms}
                )
            ctx = context.with_deadline(time.monotonic() + budget)
            # Every attempt (a retry waited too) runs only while its token is valid.
            self.verifier.check(token)
            try:
                return await self._attempt(entry, params, ctx, request, budget, state)
            except BridgeError as err:
                if not err.retryable or attempt >= attempts:
                    raise
                delay = min(self.max_backoff_s, self.base_backoff_s * 2 ** (attempt - 1))
                if overall is not None and time.monotonic() + delay >= overall:
                    raise
                _LOG.info(
                    "retrying %s after %s (attempt %d of %d)",
                    defn.identity,
                    err.code,
                    attempt,
                    attempts,
                )
                await asyncio.sleep(delay)

    async def _attempt(
        self,
        entry: RegisteredTool,
        params: dict[str, Any],
        ctx: CallContext,
        request: ToolRequest,
        budget: float,
        state: _State,
    ) -> Any:
        defn = entry.definition
        handler = entry.handler
        remote = self.remote
        path = request.routing.path

        async def run() -> Any:
            state.execution = None
            if handler is not None:
                began = time.perf_counter()
                try:
                    return await handler(params, ctx)
                finally:
                    # Reported even when the handler fails or times out: it ran here.
                    state.execution = ExecutionInfo(
                        node_id=self.node_id,
                        hops=len(path),
                        duration_ms=round((time.perf_counter() - began) * 1000, 3),
                        path=(*path, self.node_id),
                    )
            if remote is None:
                raise NoCapableNodeError(
                    f"'{defn.identity}' lives on '{defn.server_name}' and no mesh router runs",
                    {"tool": defn.identity, "server_name": defn.server_name},
                )
            outcome = await remote.execute(entry, params, ctx, request)
            state.execution = outcome.execution
            if outcome.error is not None:
                raise outcome.error
            return outcome.result

        try:
            result = await asyncio.wait_for(run(), budget)
        except BridgeError:
            raise
        except TimeoutError as err:
            raise ToolTimeoutError(
                f"'{defn.identity}' did not finish within {budget * 1000:.0f} ms",
                {"tool": defn.identity, "timeout_ms": round(budget * 1000)},
            ) from err
        except Exception as err:
            _LOG.exception("tool %s failed", defn.identity)
            raise ToolFailedError(
                f"'{defn.identity}' failed: {type(err).__name__}", {"tool": defn.identity}
            ) from err
        try:
            state.result_json = json.dumps(result, ensure_ascii=False)
        except (TypeError, ValueError) as err:
            raise ToolFailedError(
                f"'{defn.identity}' returned a value that is not JSON", {"tool": defn.identity}
            ) from err
        return result

    def _fail(
        self,
        request: ToolRequest,
        call_id: str,
        call: ToolCall,
        state: _State,
        err: BridgeError,
        started: float,
    ) -> ToolResponse:
        tool = state.tool.identity if state.tool is not None else None
        if state.redactor.active:
            err = err.scrubbed(state.redactor.scrub)  # still typed: no JSON round trip
        response = ToolResponse.failure(
            request,
            call_id,
            tool,
            err,
            round((time.perf_counter() - started) * 1000, 3),
            self.node_id,
            state.execution,
        )
        if state.decision == "pending":
            state.decision = err.code.value.lower()
        if state.token is not None and call.agent_id is None:
            call = call.but(agent_id=state.token.agent_id, token_id=state.token.id)
        self.calls.failed(call, err)
        self._record(request, response, state, started)
        return response

    def _cancelled(
        self, request: ToolRequest, call_id: str, call: ToolCall, state: _State, started: float
    ) -> None:
        """End a call whose task was cancelled: its final status and its audit row.

        The row is queued, not waited for (the task is going); the writer commits it.
        A call cancelled after it was allowed may have reached its device: the row says
        so, since nobody will hear its answer.
        """
        if state.token is not None and call.agent_id is None:
            call = call.but(agent_id=state.token.agent_id, token_id=state.token.id)
        if state.tool is not None:
            call = call.but(tool=state.tool.identity)
        self.calls.cancelled(call)
        if self.audit is None or state.token is None:
            return  # no verified identity: nothing was done on anyone's behalf
        ran = state.decision == "allowed"
        if state.decision == "pending":
            state.decision = "cancelled"
        message = (
            "cancelled while it ran (its caller went away or the bridge stopped); "
            "whether it took effect is unknown"
            if ran
            else "cancelled before it ran (its caller went away or the bridge stopped)"
        )
        self._write_row(
            request,
            state,
            started,
            call_id,
            outcome="cancelled",
            error={"message": message},
            result=None,
            execution=state.execution,
        )

    def _record(
        self, request: ToolRequest, response: ToolResponse, state: _State, started: float
    ) -> None:
        self._write_row(
            request,
            state,
            started,
            response.call_id,
            outcome="completed" if response.ok else "error",
            error=response.error,
            result=response.result,
            execution=response.execution,
        )

    def _write_row(
        self,
        request: ToolRequest,
        state: _State,
        started: float,
        call_id: str,
        *,
        outcome: str,
        error: dict[str, Any] | None,
        result: Any,
        execution: ExecutionInfo | None,
    ) -> None:
        """Queue a call's audit row (or, with no verified identity, count the refusal)."""
        if self.audit is None:
            return
        if state.token is None:
            # No verified identity: a bounded counter, not a row anyone can flood.
            why = (error or {}).get("details") or {}
            path = request.routing.path
            source = f"node:{path[-1]}" if path else "call"
            if isinstance(why.get("token_id"), str):
                # A genuine token refused (revoked, expired, re-spelled): counted under its id.
                source = f"token:{why['token_id']}"
            self.audit.count_rejection(source, str(why.get("reason") or state.decision))
            return
        defn = state.tool.definition if state.tool is not None else None
        details: dict[str, Any] = {}
        if state.approval_id is not None:
            details["approval_id"] = state.approval_id
        if state.approvers:
            details["approvers"] = state.approvers
        if state.votes:
            details["votes"] = state.votes
        if request.idempotency_key is not None:
            details["idempotency_key"] = request.idempotency_key
        if error is not None:
            details["message"] = error.get("message")
        if request.via is not None:
            details["via"] = request.via
        if execution is not None and execution.node_id != self.node_id:
            details["execution"] = execution.to_json()
        state.committed = self.audit.record(
            AuditEntry(
                call_id=call_id,
                agent_id=state.token.agent_id if state.token is not None else None,
                token_id=state.token.id if state.token is not None else None,
                tool=defn.identity if defn is not None else request.tool,
                decision=state.decision,
                outcome=outcome,
                error_code=(error or {}).get("code"),
                params=(
                    state.redactor.params(state.params)
                    if defn is not None and defn.audit.log_params and state.params is not None
                    else None
                ),
                result=result if defn is not None and defn.audit.log_result else None,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                node_id=self.node_id,
                trace_id=request.context.trace_id,
                details=details,
            )
        )


class _State:
    """What the pipeline learned so far, for the audit record."""

    __slots__ = (
        "approval_id",
        "approvers",
        "charged",
        "committed",
        "decision",
        "executed_error",
        "execution",
        "idem_key",
        "params",
        "redactor",
        "result_json",
        "seat",
        "token",
        "tool",
        "votes",
    )

    def __init__(self) -> None:
        self.token: AgentToken | None = None
        self.seat: str | None = None  # the token id holding a seat of ``Invoker.in_flight``
        self.tool: RegisteredTool | None = None
        self.params: dict[str, Any] | None = None
        self.decision = "pending"
        self.approval_id: str | None = None
        self.approvers: list[str] = []
        self.votes: list[dict[str, str]] = []
        self.idem_key: str | None = None
        self.executed_error = False
        self.execution: ExecutionInfo | None = None
        self.redactor = Redactor()
        self.result_json: str | None = None
        self.committed: asyncio.Future[None] | None = None
        self.charged = False


def _ensure_available(entry: RegisteredTool) -> None:
    if not entry.available:
        raise DeviceUnavailableError(
            f"tool '{entry.identity}' is unavailable (its device is not reachable)",
            {"tool": entry.identity},
        )


def _audit_failure(err: BaseException, call_id: str) -> BridgeError:
    """Return what a caller is told when its call's audit row could not be committed."""
    full = isinstance(err, StorageFullError) or (
        isinstance(err, sqlite3.Error)
        and getattr(err, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_FULL
    )
    if full:
        # Retryable: nothing was acknowledged, and the call works again once space is freed.
        return StorageFullError(
            "the state directory's disk is full: the call's audit record could not be "
            "written, so the call is not acknowledged",
            {"call_id": call_id, "reason": "audit_unavailable"},
        )
    return InternalError(
        "the call's audit record could not be written",
        {"call_id": call_id, "reason": "audit_unavailable"},
    )
