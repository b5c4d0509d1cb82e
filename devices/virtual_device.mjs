// One virtual Matter device (matter.js) for the bridge's demo and end-to-end tests.
//
//   node virtual_device.mjs --kind onoff|dimmable|color|thermostat|cover|<kinds/index.mjs> --state-dir DIR
//        [--port 5540] [--passcode 20202021] [--discriminator 3840] [--label "Test onoff"]
//        [--level-trim 200] [--travel-s 4]
//
// --level-trim N: a dimmer with a high-end trim, as many wall dimmers have: it still
// says MaxLevel 254 but never goes above level N (a command for more ends at N).
// --travel-s S: a cover that takes S seconds from fully open to fully closed, moving in
// steps (without it, a cover is at its target at once).
//
// It prints one machine-readable line per fact, each a word and a JSON object:
//   PAIRING {"qr": "MT:...", "manual": "...", "passcode": ..., "discriminator": ...}
//   READY   {"pid": ..., "port": ..., "kind": "...", "commissioned": false}
//   STATE   {"attribute": "onOff", "value": true}          (every device-side change)
//   LOCAL   {"attribute": "onOff", "value": false}         (after a SIGUSR1 "button press")
// A light switch reports its bindings as STATE lines of cluster "binding", attribute
// "established" / "removed", value {"node": 5, "endpoint": 1} (kinds/switches.mjs).
// SIGUSR1 acts like a physical button: lights toggle on/off, the thermostat's room
// temperature rises by 0.5 °C; the kinds in kinds/ say what theirs does (a button is
// pressed once, a leak starts, a fan steps its mode ...). A line "ACTION ARG..." on stdin
// runs a kind's named action (a button: "press 2", "long"), reported as a LOCAL line.
// SIGINT/SIGTERM close the node cleanly and exit 0.
// A storage folder that already holds a commissioned node restarts it without pairing.
import { ServerNode, VendorId, Environment } from "@matter/main";
import { OnOffLightDevice } from "@matter/main/devices/on-off-light";
import { DimmableLightDevice } from "@matter/main/devices/dimmable-light";
import { ExtendedColorLightDevice } from "@matter/main/devices/extended-color-light";
import { ThermostatDevice } from "@matter/main/devices/thermostat";
import { ColorControlServer } from "@matter/main/behaviors/color-control";
import { ThermostatServer } from "@matter/main/behaviors/thermostat";
import { WindowCoveringDevice } from "@matter/main/devices/window-covering";
import { WindowCoveringServer } from "@matter/main/behaviors/window-covering";
import { LevelControlServer } from "@matter/main/behaviors/level-control";
import { parseArgs } from "node:util";
import { createInterface } from "node:readline";
import { MORE_KINDS } from "./kinds/index.mjs";

const { values: opts } = parseArgs({
    options: {
        kind: { type: "string", default: "onoff" },
        "state-dir": { type: "string" },
        port: { type: "string", default: "5540" },
        passcode: { type: "string", default: "20202021" },
        discriminator: { type: "string", default: "3840" },
        label: { type: "string" },
        serial: { type: "string" },
        "level-trim": { type: "string" },
        "travel-s": { type: "string" },
    },
});
const levelTrim = opts["level-trim"] === undefined ? undefined : Number(opts["level-trim"]);
const travelMs = opts["travel-s"] === undefined ? 0 : Number(opts["travel-s"]) * 1000;

// The dimmer's trim: the level it is asked for, cut at the trim, whatever MaxLevel says.
class TrimmedLevelControlServer extends LevelControlServer.with("Lighting", "OnOff") {
    moveToLevelLogic(level, transitionTime, withOnOff, options) {
        return super.moveToLevelLogic(Math.min(level, levelTrim), transitionTime, withOnOff, options);
    }
}

// A cover's motor: immediate by default; with --travel-s, 10 steps a second toward the
// target (each a state change of the endpoint, as a real motor's position reports).
let moveCover = undefined;
class MotorCoveringServer extends WindowCoveringServer.with("Lift", "PositionAwareLift") {
    handleMovement(type, reversed, direction, targetPercent100ths) {
        if (travelMs === 0 || moveCover === undefined || targetPercent100ths === undefined) {
            return super.handleMovement(type, reversed, direction, targetPercent100ths);
        }
        moveCover(targetPercent100ths);
    }
}

function emit(word, data) {
    process.stdout.write(`${word} ${JSON.stringify(data)}\n`);
}

// Each kind: the device type with the features the bridge maps, and its initial state.
const KINDS = {
    onoff: () => [OnOffLightDevice, { onOff: { onOff: false } }],
    dimmable: () => [
        levelTrim === undefined ? DimmableLightDevice : DimmableLightDevice.with(TrimmedLevelControlServer),
        // managedTransitionTimeHandling: a fade (transitionTime) takes its time, stepping
        // CurrentLevel and counting RemainingTime down (given, it is computed), as a real
        // dimmer's does.
        { onOff: { onOff: false }, levelControl: { currentLevel: 128, managedTransitionTimeHandling: true, remainingTime: 0 } },
    ],
    cover: () => [
        // A roller shade: lift only, knows its position; starts fully open (0 = open).
        WindowCoveringDevice.with(MotorCoveringServer),
        {
            windowCovering: {
                type: 0,
                endProductType: 0,
                currentPositionLiftPercent100ths: 0,
                targetPositionLiftPercent100ths: 0,
                configStatus: { operational: true, onlineReserved: true, liftMovementReversed: false,
                                liftPositionAware: true, tiltPositionAware: false,
                                liftEncoderControlled: false, tiltEncoderControlled: false },
            },
        },
    ],
    color: () => [
        // Hue/saturation, CIE xy and colour temperature: the three ways the bridge sets colour.
        ExtendedColorLightDevice.with(ColorControlServer.with("HueSaturation", "Xy", "ColorTemperature")),
        {
            onOff: { onOff: false },
            levelControl: { currentLevel: 200, managedTransitionTimeHandling: true, remainingTime: 0 },
            colorControl: {
                colorMode: 2,
                enhancedColorMode: 2,
                colorTemperatureMireds: 370,
                startUpColorTemperatureMireds: 370,
                colorTempPhysicalMinMireds: 153,
                colorTempPhysicalMaxMireds: 500,
                coupleColorTempToLevelMinMireds: 153,
            },
        },
    ],
    thermostat: () => [
        ThermostatDevice.with(ThermostatServer.with("Heating", "Cooling")),
        {
            thermostat: {
                // 0.01 °C units; cooling-and-heating sequence; starts in Heat mode.
                localTemperature: 2050,
                occupiedHeatingSetpoint: 2000,
                occupiedCoolingSetpoint: 2500,
                controlSequenceOfOperation: 4,
                systemMode: 4,
            },
        },
    ],
};

const kind = opts.kind;
if (!(kind in KINDS) && !(kind in MORE_KINDS)) {
    const known = [...Object.keys(KINDS), ...Object.keys(MORE_KINDS)];
    console.error(`unknown --kind ${kind}; expected one of ${known.join(", ")}`);
    process.exit(2);
}
if (!opts["state-dir"]) {
    console.error("--state-dir DIR is required (use a fresh folder for a device that is not yet paired)");
    process.exit(2);
}
const label = opts.label ?? `Test ${kind}`;
const serial = opts.serial ?? `test-${kind}-0001`;
const port = Number(opts.port);

Environment.default.vars.set("storage.path", opts["state-dir"]);

const more = kind in MORE_KINDS ? MORE_KINDS[kind]() : undefined;
const [deviceType, initialState] = more ? [more.device, more.state] : KINDS[kind]();
const node = await ServerNode.create({
    id: `atmosphere-${kind}`,
    network: { port },
    commissioning: { passcode: Number(opts.passcode), discriminator: Number(opts.discriminator) },
    productDescription: { name: label, deviceType: deviceType.deviceType },
    basicInformation: {
        vendorName: "matter.js test",
        vendorId: VendorId(0xfff1),
        productId: 0x8000,
        productName: label,
        productLabel: label,
        nodeLabel: label,
        serialNumber: serial,
        uniqueId: serial,
    },
});
const endpoint = await node.add(deviceType, { id: kind, ...initialState });

// Report every state change the controller (or a local press) makes.
const watched = [
    ["onOff", "onOff"],
    ["levelControl", "currentLevel"],
    ["colorControl", "colorMode"],
    ["colorControl", "currentHue"],
    ["colorControl", "currentSaturation"],
    ["colorControl", "currentX"],
    ["colorControl", "currentY"],
    ["colorControl", "colorTemperatureMireds"],
    ["thermostat", "localTemperature"],
    ["thermostat", "occupiedHeatingSetpoint"],
    ["thermostat", "occupiedCoolingSetpoint"],
    ["thermostat", "systemMode"],
    ["windowCovering", "currentPositionLiftPercent100ths"],
    ["windowCovering", "targetPositionLiftPercent100ths"],
];
more?.setup?.(endpoint, emit);
for (const [cluster, attribute] of more?.watched ?? watched) {
    endpoint.events[cluster]?.[`${attribute}$Changed`]?.on(value => emit("STATE", { cluster, attribute, value }));
}

let coverTimer = undefined;
moveCover = target => {
    clearInterval(coverTimer);
    const step = Math.max(1, Math.round(10000 / (travelMs / 100)));  // per 100 ms
    coverTimer = setInterval(() => {
        const now = endpoint.state.windowCovering.currentPositionLiftPercent100ths;
        const next = now < target ? Math.min(target, now + step) : Math.max(target, now - step);
        endpoint.set({ windowCovering: { currentPositionLiftPercent100ths: next } })
            .catch(err => console.error(`cover step failed: ${err}`));
        if (next === target) clearInterval(coverTimer);
    }, 100);
};

await node.start();
if (!node.lifecycle.isCommissioned) {
    const codes = node.state.commissioning.pairingCodes;
    emit("PAIRING", {
        qr: codes.qrPairingCode,
        manual: codes.manualPairingCode,
        passcode: Number(opts.passcode),
        discriminator: Number(opts.discriminator),
    });
}
emit("READY", { pid: process.pid, port, kind, commissioned: node.lifecycle.isCommissioned });

// A "physical button": change state on the device itself, not through the controller.
async function reportLocal(change) {
    const [cluster, attribute, value] = await change;
    emit("LOCAL", { cluster, attribute, value });
}

if (more?.actions) {
    createInterface({ input: process.stdin }).on("line", line => {
        const [action, ...args] = line.trim().split(/\s+/);
        const run = more.actions[action];
        if (!run) {
            console.error(`unknown action ${JSON.stringify(action)}; expected one of ${Object.keys(more.actions)}`);
            return;
        }
        reportLocal(run(endpoint, ...args)).catch(err => console.error(`action ${action} failed: ${err}`));
    });
}

process.on("SIGUSR1", () => {
    (async () => {
        if (more) {
            await reportLocal(more.local(endpoint));
        } else if (endpoint.state.onOff !== undefined) {
            const value = !endpoint.state.onOff.onOff;
            await endpoint.set({ onOff: { onOff: value } });
            emit("LOCAL", { cluster: "onOff", attribute: "onOff", value });
        } else {
            const value = endpoint.state.thermostat.localTemperature + 50;
            await endpoint.set({ thermostat: { localTemperature: value } });
            emit("LOCAL", { cluster: "thermostat", attribute: "localTemperature", value });
        }
    })().catch(err => console.error(`local change failed: ${err}`));
});

let closing = false;
async function shutdown() {
    if (closing) return;
    closing = true;
    try {
        await node.close();
    } finally {
        process.exit(0);
    }
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
