"""Redactor: secret params and values hidden in params, nested results and messages."""

from bridge.matter import MatterToolGenerator, NodeData, build_devices, load_cluster_maps
from bridge.tools.definition import Audit, ToolDefinition
from bridge.tools.redaction import REDACTED, Redactor, secret_params
from tests.matter.dumps import load_dump

SCHEMA = {"type": "object", "properties": {"door": {"type": "string"}, "pin": {"type": "string"}}}


def tool(**audit: object) -> ToolDefinition:
    return ToolDefinition(
        name="unlock", description="Unlock", parameters=SCHEMA, audit=Audit(**audit)
    )  # type: ignore[arg-type]


def test_secret_names_and_values_are_hidden() -> None:
    defn = tool(extra={"secret_params": ["pin"]})
    assert secret_params(defn) == frozenset({"pin"})
    r = Redactor.for_call(defn, {"door": "front", "pin": "4321"})
    assert r.params({"door": "front", "pin": "4321"}) == {"door": "front", "pin": REDACTED}
    assert r.scrub({"a": ["pin 4321 wrong", 4321, {"pin": "x"}], "b": "front", "c": True}) == {
        "a": [f"pin {REDACTED} wrong", REDACTED, {"pin": REDACTED}],
        "b": "front",
        "c": True,
    }


def test_short_secrets_only_replaced_where_they_stand_alone() -> None:
    r = Redactor.for_call(tool(extra={"secret_params": ["pin"]}), {"pin": "12"})
    assert r.scrub(["12", "level 120", 12]) == [REDACTED, "level 120", REDACTED]


def test_no_secrets_is_identity_and_log_params_false_hides_every_value() -> None:
    plain = Redactor.for_call(tool(), {"door": "front", "pin": "4321"})
    assert not plain.active
    assert plain.scrub({"pin": "4321"}) == {"pin": "4321"}
    hidden = Redactor.for_call(tool(log_params=False), {"door": "front"})
    assert hidden.active
    assert hidden.params({"door": "front"}) == {"door": REDACTED}


def test_generated_door_lock_unlock_hides_its_pin() -> None:
    devices = build_devices([NodeData.from_json(load_dump("ha-core/mock_door_lock"))])
    tools = MatterToolGenerator(load_cluster_maps()).generate(devices)
    unlock = next(t.definition for t in tools if t.definition.name == "mock_door_lock_unlock")
    assert secret_params(unlock) == frozenset({"pin_code"})
    assert unlock.audit.log_params is False
    r = Redactor.for_call(unlock, {"pin_code": "86420"})
    assert r.params({"pin_code": "86420"}) == {"pin_code": REDACTED}
    assert r.scrub({"message": "PIN 86420 rejected"}) == {"message": f"PIN {REDACTED} rejected"}
