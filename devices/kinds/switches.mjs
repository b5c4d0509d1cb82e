// A generic switch (momentary button with release, long press and multi-press).
// A press is the position going 1 then back to 0; matter.js's Switch server turns the
// positions into the spec's events (InitialPress, ShortRelease, LongPress, LongRelease,
// MultiPressOngoing, MultiPressComplete).
import { GenericSwitchDevice } from "@matter/main/devices/generic-switch";
import { SwitchServer } from "@matter/main/behaviors/switch";

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
};
