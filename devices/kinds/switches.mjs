// A generic switch (momentary button with release, long press and multi-press).
// A press is the position going 1 then back to 0; matter.js's Switch server turns the
// positions into the spec's events (InitialPress, ShortRelease, LongPress, LongRelease,
// MultiPressOngoing, MultiPressComplete).
import { GenericSwitchDevice } from "@matter/main/devices/generic-switch";
import { SwitchServer } from "@matter/main/behaviors/switch";
import { OnOffLightSwitchDevice } from "@matter/main/devices/on-off-light-switch";
import { BindingServer } from "@matter/main/behaviors/binding";
import { OnOffClient } from "@matter/main/behaviors/on-off";

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

// Press `count` times in a row (gaps well inside multiPressDelay), holding each `holdMs`.
async function press(endpoint, count, holdMs) {
    for (let i = 0; i < count; i++) {
        await endpoint.set({ switch: { rawPosition: 1 } });
        await sleep(holdMs);
        await endpoint.set({ switch: { rawPosition: 0 } });
        if (i + 1 < count) await sleep(100);
    }
}

export const SWITCH_KINDS = {
    button: () => ({
        device: GenericSwitchDevice.with(
            SwitchServer.with("MomentarySwitch", "MomentarySwitchRelease", "MomentarySwitchLongPress",
                "MomentarySwitchMultiPress"),
        ),
        state: {
            switch: {
                numberOfPositions: 2, currentPosition: 0, rawPosition: 0, multiPressMax: 3,
                longPressDelay: 1000, multiPressDelay: 400,
            },
        },
        watched: [["switch", "currentPosition"]],
        // SIGUSR1: one short press.
        async local(endpoint) {
            await press(endpoint, 1, 80);
            return ["switch", "pressed", 1];
        },
        // Lines on stdin: "press N" (N short presses), "long" (held past longPressDelay).
        actions: {
            async press(endpoint, count = "1") {
                await press(endpoint, Number(count), 80);
                return ["switch", "pressed", Number(count)];
            },
            async long(endpoint) {
                await press(endpoint, 1, 1600);
                return ["switch", "longPressed", 1];
            },
        },
    }),
    // An On/Off Light Switch (device type 0x0103): a Binding cluster server and an OnOff
    // client. A controller writes its Binding attribute; matter.js resolves each entry to
    // the bound node (a CASE session from this device to it) and the switch's press (SIGUSR1, or \"press\" on stdin) sends
    // OnOff Toggle there itself, device to device: no controller or bridge in the path.
    "light-switch": () => {
        const bound = new Map();  // entry key -> the bound peer's endpoint
        const key = entry => `${entry.node}/${entry.endpoint}`;
        // Toggle every bound light; the LOCAL line says how many took the command.
        async function toggle() {
            let sent = 0;
            for (const target of bound.values()) {
                try {
                    await target.commandsOf(OnOffClient).toggle();
                    sent += 1;
                } catch (err) {
                    console.error(`toggle on a bound light failed: ${err}`);
                }
            }
            return ["onOffClient", "toggled", sent];
        }
        return {
            device: OnOffLightSwitchDevice.with(BindingServer).withClientClusters(OnOffClient),
            state: { binding: { binding: [] } },
            watched: [],
            setup(endpoint, emit) {
                endpoint.events.binding.established.on(resolution => {
                    if (resolution.kind !== "client") return;
                    bound.set(key(resolution.entry), resolution.endpoint);
                    emit("STATE", { cluster: "binding", attribute: "established",
                                    value: { node: Number(resolution.entry.node), endpoint: resolution.entry.endpoint } });
                });
                endpoint.events.binding.removed.on(resolution => {
                    if (resolution.kind !== "client") return;
                    bound.delete(key(resolution.entry));
                    emit("STATE", { cluster: "binding", attribute: "removed",
                                    value: { node: Number(resolution.entry.node), endpoint: resolution.entry.endpoint } });
                });
            },
            // SIGUSR1: the switch's rocker - toggle the bound lights.
            local: () => toggle(),
            actions: { press: () => toggle() },
        };
    },
};
