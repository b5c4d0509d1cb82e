"""BridgeError copies: a scrubbed error keeps its class, code, status and cause."""

from __future__ import annotations

from bridge.errors import DeviceUnavailableError, ErrorCode, ToolFailedError
from bridge.tools.definition import Audit, ToolDefinition
from bridge.tools.redaction import REDACTED, Redactor


class _LockJammed(DeviceUnavailableError):
    """A layer's own error with its own constructor."""

    def __init__(self, lock: str, pin: str) -> None:
        super().__init__(f"lock {lock} jammed after pin {pin}", {"lock": lock, "pin": pin})


def _redactor(pin: str) -> Redactor:
    defn = ToolDefinition(
        name="unlock",
        namespace="t",
        description="Unlock",
        audit=Audit(extra={"secret_params": ["pin"]}),
    )
    return Redactor.for_call(defn, {"pin": pin})


def test_scrubbed_error_stays_typed_and_hides_the_secret() -> None:
    cause = OSError("wire cut")
    err = _LockJammed("front", "834271")
    err.__cause__ = cause
    scrubbed = err.scrubbed(_redactor("834271").scrub)
    assert type(scrubbed) is _LockJammed
    assert scrubbed.code is ErrorCode.DEVICE_UNAVAILABLE
    assert (scrubbed.http_status, scrubbed.retryable) == (503, True)
    assert scrubbed.message == f"lock front jammed after pin {REDACTED}"
    assert scrubbed.details == {"lock": "front", "pin": REDACTED}
    assert scrubbed.args == (scrubbed.message,)
    assert scrubbed.__cause__ is cause
    assert scrubbed.to_json() == {
        "code": "DEVICE_UNAVAILABLE",
        "message": f"lock front jammed after pin {REDACTED}",
        "details": {"lock": "front", "pin": REDACTED},
        "retryable": True,
    }
    # The original is untouched.
    assert err.details == {"lock": "front", "pin": "834271"}


def test_nothing_to_hide_returns_the_same_error() -> None:
    err = ToolFailedError("'t:unlock' failed: OSError", {"tool": "t:unlock"})
    assert err.scrubbed(Redactor().scrub) is err
