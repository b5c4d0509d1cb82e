"""Automations at home scale: 500 rules on a 100-device home, in one run.

A real ``BridgeService`` (SQLite, the real pipeline: signed tokens, permission checks,
audit) with Matter off; ``device.event`` messages are published on its event bus as the
Matter tool sync publishes them for a controller's ``node_event`` (a stand-in only for
the controller and devices, which tests/automations/test_real_rules.py runs for real).
500 rules: 5 per device, each "on switch.initial_press of device D, call
core:store_data" (one SQLite write through the pipeline per action).

Prints, per device event: the bridge's CPU time with no rules loaded, with the 500 rules
loaded but none matching the event, and with 5 rules acting on it; the CPU of one clock
tick with the 500 rules (each second: time triggers, and every rule's creator token
checked); and the trigger-to-action latency (publish → the first action's call
completed, and → all 5).
Last line: one JSON object.

    .venv/bin/python bench/automations.py [--events 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bridge.auth.tokens import issue_token
from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from bridge.events import EventBus
from bridge.service import BridgeService

DEVICES = 100
RULES_PER_DEVICE = 5


def _event(device: int, kind: str) -> dict[str, Any]:
    return {
        "device_id": f"{device}-1",
        "name": f"Button {device}",
        "event": kind,
        "summary": "button pressed",
        "fields": {"position": 1},
        "matter": {"endpoint_id": 1, "cluster_id": 59, "event_id": 1},
    }


async def _drain(bus: EventBus) -> None:
    """Let every subscriber take what was published (the runner's queue empties)."""
    for _ in range(1000):
        await asyncio.sleep(0)
        if all(sub.queue.empty() for sub in bus._subs):
            return


async def _cpu_per_event(bus: EventBus, events: int, kind: str) -> float:
    start = time.process_time()
    for i in range(events):
        bus.publish("device.event", _event(i % DEVICES + 1, kind))
        await _drain(bus)
    return (time.process_time() - start) / events


async def main(events: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config = BridgeConfig(
            state_dir=Path(tmp) / "state",
            api=ApiConfig(port=0),
            matter=replace(MatterConfig(), enabled=False),
        )
        service = BridgeService(config, enable_matter=False)
        await service.start()
        try:
            assert service.invocation is not None
            assert service.automations is not None
            runner, bus = service.automations, service.events
            admin = service.invocation.verifier.verify(
                issue_token(service.invocation.key, agent_id="bench", permissions=["*"], ttl_s=3600)
            )
            none_cpu = await _cpu_per_event(bus, events, "switch.initial_press")
            made = time.perf_counter()
            for i in range(DEVICES * RULES_PER_DEVICE):
                device = i % DEVICES + 1
                await runner.create(
                    admin,
                    {
                        "id": f"r{i}",
                        "rate_limit_per_minute": 600,
                        "trigger": {
                            "type": "device_event",
                            "device_id": f"{device}-1",
                            "event": "switch.initial_press",
                        },
                        "actions": [
                            {
                                "type": "call",
                                "tool": "core:store_data",
                                "params": {"key": f"r{i}", "value": i},
                            }
                        ],
                    },
                )
            made = time.perf_counter() - made
            idle_cpu = await _cpu_per_event(bus, events, "switch.long_press")
            # The clock tick (1 s) re-checks every rule's creator token (revoked, expired).
            c0 = time.process_time()
            for _ in range(100):
                runner._tick_once()
            tick_cpu = (time.process_time() - c0) / 100
            # Acting: publish, wait for the 5 actions' completions, next.
            first: list[float] = []
            every: list[float] = []
            cpu = 0.0
            async with bus.subscription("tool_call.status") as sub:
                for i in range(events):
                    device = i % DEVICES + 1
                    c0, t0 = time.process_time(), time.perf_counter()
                    bus.publish("device.event", _event(device, "switch.initial_press"))
                    done = 0
                    while done < RULES_PER_DEVICE:
                        ev = await asyncio.wait_for(sub.get(), 30)
                        if ev.data["status"] == "completed" and str(ev.data["agentId"]).startswith(
                            "automation:"
                        ):
                            done += 1
                            if done == 1:
                                first.append(time.perf_counter() - t0)
                    every.append(time.perf_counter() - t0)
                    await _drain(bus)
                    cpu += time.process_time() - c0
            await asyncio.sleep(0.2)  # the last runs' own audit rows follow their calls
            await service.invocation.audit.flush()
            runs = len(service.invocation.audit.query_sync(agent_id=None, limit=10_000))
        finally:
            await service.stop()
    result = {
        "devices": DEVICES,
        "rules": DEVICES * RULES_PER_DEVICE,
        "events": events,
        "rules_created_s": round(made, 2),
        "cpu_ms_per_event_no_rules": round(none_cpu * 1000, 3),
        "cpu_ms_per_event_500_rules_none_match": round(idle_cpu * 1000, 3),
        "cpu_ms_per_event_5_rules_act": round(cpu / events * 1000, 3),
        "cpu_ms_per_clock_tick_500_rules": round(tick_cpu * 1000, 3),
        "latency_ms_first_action_median": round(statistics.median(first) * 1000, 2),
        "latency_ms_first_action_p95": round(sorted(first)[int(0.95 * len(first))] * 1000, 2),
        "latency_ms_all_5_actions_median": round(statistics.median(every) * 1000, 2),
        "audit_rows_runs_and_calls": runs,
    }
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100)
    args = parser.parse_args()
    out = asyncio.run(main(max(1, min(args.events, 2000))))
    for key, value in out.items():
        print(f"{key:>42}: {value}")
    print(json.dumps(out))
