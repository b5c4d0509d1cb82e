// One virtual Matter device (matter.js), as a function: virtual_device.mjs runs one per
// process, device_host.mjs runs many in one process (the library loads once).
//
// createDevice(options, emit) builds the node, starts it and returns its handle:
//   options  - {id, kind, port, passcode, discriminator, label, serial, levelTrim, travelMs}
//   emit     - (word, data) => void: PAIRING, STATE and LOCAL facts (virtual_device.mjs)
//   handle   - {node, endpoint, commissioned, local(), action(line), close()}
import { ServerNode, VendorId } from "@matter/main";
import { OnOffLightDevice } from "@matter/main/devices/on-off-light";
import { DimmableLightDevice } from "@matter/main/devices/dimmable-light";
import { ExtendedColorLightDevice } from "@matter/main/devices/extended-color-light";
import { ThermostatDevice } from "@matter/main/devices/thermostat";
import { ColorControlServer } from "@matter/main/behaviors/color-control";
import { ThermostatServer } from "@matter/main/behaviors/thermostat";
import { WindowCoveringDevice } from "@matter/main/devices/window-covering";
import { WindowCoveringServer } from "@matter/main/behaviors/window-covering";
import { LevelControlServer } from "@matter/main/behaviors/level-control";
import { MORE_KINDS } from "./kinds/index.mjs";

// The base kinds: the device type with the features the bridge maps and its initial
// state. `device` is this device's own settings (level trim, cover travel).
const KINDS = {
    onoff: () => [OnOffLightDevice, { onOff: { onOff: false } }],
    dimmable: device => [
        device.levelTrim === undefined
            ? DimmableLightDevice
            : DimmableLightDevice.with(trimmedLevelControl(device.levelTrim)),
        // managedTransitionTimeHandling: a fade (transitionTime) takes its time, stepping
        // CurrentLevel and counting RemainingTime down (given, it is computed), as a real
        // dimmer's does.
        { onOff: { onOff: false }, levelControl: { currentLevel: 128, managedTransitionTimeHandling: true, remainingTime: 0 } },
    ],
    cover: device => [
        // A roller shade: lift only, knows its position; starts fully open (0 = open).
        WindowCoveringDevice.with(motorCovering(device)),
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

export const KIND_NAMES = [...Object.keys(KINDS), ...Object.keys(MORE_KINDS)];

// The dimmer's trim: the level it is asked for, cut at the trim, whatever MaxLevel says.
function trimmedLevelControl(levelTrim) {
    return class TrimmedLevelControlServer extends LevelControlServer.with("Lighting", "OnOff") {
        moveToLevelLogic(level, transitionTime, withOnOff, options) {
            return super.moveToLevelLogic(Math.min(level, levelTrim), transitionTime, withOnOff, options);
        }
    };
}

// A cover's motor: immediate by default; with a travel time, 10 steps a second toward
// the target (each a state change of the endpoint, as a real motor's position reports).
function motorCovering(device) {
    return class MotorCoveringServer extends WindowCoveringServer.with("Lift", "PositionAwareLift") {
        handleMovement(type, reversed, direction, targetPercent100ths) {
            if (!device.travelMs || device.moveCover === undefined || targetPercent100ths === undefined) {
                return super.handleMovement(type, reversed, direction, targetPercent100ths);
            }
            device.moveCover(targetPercent100ths);
        }
    };
}

// Every state change the controller (or a local press) makes, for the base kinds.
const WATCHED = [
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

export async function createDevice(options, emit) {
    const { id, kind, port, passcode, discriminator } = options;
    if (!KIND_NAMES.includes(kind)) {
        throw new Error(`unknown kind ${kind}; expected one of ${KIND_NAMES.join(", ")}`);
    }
    const label = options.label ?? `Test ${kind}`;
    const serial = options.serial ?? `test-${kind}-0001`;
    const device = { levelTrim: options.levelTrim, travelMs: options.travelMs ?? 0, moveCover: undefined };

    const more = kind in MORE_KINDS ? MORE_KINDS[kind]() : undefined;
    const [deviceType, initialState] = more ? [more.device, more.state] : KINDS[kind](device);
    const node = await ServerNode.create({
        id,
        network: { port },
        commissioning: { passcode, discriminator },
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

    more?.setup?.(endpoint, emit);
    for (const [cluster, attribute] of more?.watched ?? WATCHED) {
        endpoint.events[cluster]?.[`${attribute}$Changed`]?.on(value => emit("STATE", { cluster, attribute, value }));
    }

    let coverTimer = undefined;
    device.moveCover = target => {
        clearInterval(coverTimer);
        const step = Math.max(1, Math.round(10000 / (device.travelMs / 100)));  // per 100 ms
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
        emit("PAIRING", { qr: codes.qrPairingCode, manual: codes.manualPairingCode, passcode, discriminator });
    }

    // A "physical button": change state on the device itself, not through the controller.
    async function reportLocal(change) {
        const [cluster, attribute, value] = await change;
        emit("LOCAL", { cluster, attribute, value });
    }

    return {
        node,
        endpoint,
        commissioned: node.lifecycle.isCommissioned,
        hasActions: more?.actions !== undefined,
        // SIGUSR1 in virtual_device.mjs: lights toggle, the thermostat's room warms 0.5 °C,
        // the kinds in kinds/ say what theirs does.
        async local() {
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
        },
        // A kind's named action: "press 2" on a button.
        async action(line) {
            const [name, ...args] = line.trim().split(/\s+/);
            const run = more?.actions?.[name];
            if (!run) {
                throw new Error(`unknown action ${JSON.stringify(name)}; expected one of ${Object.keys(more?.actions ?? {})}`);
            }
            await reportLocal(run(endpoint, ...args));
        },
        async close() {
            clearInterval(coverTimer);
            await node.close();
        },
    };
}
