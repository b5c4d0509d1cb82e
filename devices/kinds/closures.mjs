// Closures: window coverings of several Types, a garage door (Matter 1.5 ClosureControl),
// a door lock and a water valve.
import { WindowCoveringDevice } from "@matter/main/devices/window-covering";
import { ClosureDevice } from "@matter/main/devices/closure";
import { ClosurePanelDevice } from "@matter/main/devices/closure-panel";
import { DoorLockDevice } from "@matter/main/devices/door-lock";
import { WaterValveDevice } from "@matter/main/devices/water-valve";
import { WindowCoveringServer } from "@matter/main/behaviors/window-covering";
import { ClosureControlServer } from "@matter/main/behaviors/closure-control";
import { ClosureDimensionServer } from "@matter/main/behaviors/closure-dimension";
import { DoorLockServer } from "@matter/main/behaviors/door-lock";
import { ValveConfigurationAndControlServer } from "@matter/main/behaviors/valve-configuration-and-control";

// WindowCovering Type (spec 5.3.5.2) and EndProductType (5.3.5.3) per kind, below.
function covering(type, endProductType, tilt) {
    const features = tilt
        ? ["Lift", "PositionAwareLift", "Tilt", "PositionAwareTilt"]
        : ["Lift", "PositionAwareLift"];
    const state = {
        type, endProductType,
        // Percent100ths: 0 is fully open, 10000 fully closed (spec 5.3.5.9).
        currentPositionLiftPercent100ths: 0, targetPositionLiftPercent100ths: 0,
        operationalStatus: { global: 0, lift: 0, tilt: 0 },
        configStatus: {
            operational: true, onlineReserved: true, liftMovementReversed: false,
            liftPositionAware: true, tiltPositionAware: tilt, liftEncoderControlled: false,
            tiltEncoderControlled: false,
        },
        mode: { motorDirectionReversed: false, calibrationMode: false, maintenanceMode: false, ledFeedback: false },
    };
    if (tilt) {
        Object.assign(state, { currentPositionTiltPercent100ths: 0, targetPositionTiltPercent100ths: 0 });
    }
    const watched = [
        ["windowCovering", "currentPositionLiftPercent100ths"],
        ["windowCovering", "targetPositionLiftPercent100ths"],
    ];
    if (tilt) watched.push(["windowCovering", "currentPositionTiltPercent100ths"]);
    return {
        device: WindowCoveringDevice.with(WindowCoveringServer.with(...features)),
        state: { windowCovering: state },
        watched,
        // SIGUSR1: the wall switch closes an open covering and opens a closed one.
        async local(endpoint) {
            const closed = endpoint.state.windowCovering.currentPositionLiftPercent100ths === 10000;
            const value = closed ? 0 : 10000;
            await endpoint.set({
                windowCovering: { targetPositionLiftPercent100ths: value, currentPositionLiftPercent100ths: value },
            });
            return ["windowCovering", "currentPositionLiftPercent100ths", value];
        },
    };
}

// ClosureControl positions (spec 5.4.4): current 0 FullyClosed, 1 FullyOpened; target
// 0 MoveToFullyClosed, 1 MoveToFullyOpen. MainState 0 Stopped, 1 Moving.
const TARGET_TO_CURRENT = { 0: 0, 1: 1, 2: 3, 3: 4, 4: 5 };

// A garage door that arrives at its target at once (matter.js declares MoveTo/Stop only).
class GarageDoorServer extends ClosureControlServer.with("Positioning") {
    moveTo({ position }) {
        if (position === undefined) return;
        this.state.overallTargetState = { ...this.state.overallTargetState, position };
        this.state.overallCurrentState = {
            ...this.state.overallCurrentState, position: TARGET_TO_CURRENT[position], secureState: position === 0,
        };
        this.state.mainState = 0;
    }

    stop() {
        this.state.mainState = 0;
    }
}

// A closure panel (Matter 1.5 ClosureDimension, Positioning): a shutter's panel that
// arrives at its target at once (matter.js declares SetTarget/Step unimplemented).
// Positions in 100ths of a percent, 0 fully open and 10000 fully closed (spec 5.5.4).
class PanelServer extends ClosureDimensionServer.with("Positioning") {
    setTarget({ position }) {
        if (position === undefined || position === null) return;
        this.state.targetState = { ...this.state.targetState, position };
        this.state.currentState = { ...this.state.currentState, position };
    }

    step({ direction, numberOfSteps }) {
        const now = this.state.currentState?.position ?? 0;
        const delta = (direction === 1 ? 1 : -1) * numberOfSteps * this.state.stepValue;
        const position = Math.max(0, Math.min(10000, now + delta));
        this.state.targetState = { ...this.state.targetState, position };
        this.state.currentState = { ...this.state.currentState, position };
    }
}

// A valve that opens and closes at once (matter.js declares Open/Close unimplemented).
class WaterValveServer extends ValveConfigurationAndControlServer {
    open({ openDuration }) {
        this.state.targetState = 1;
        this.state.currentState = 1;
        const duration = openDuration ?? this.state.defaultOpenDuration;
        this.state.openDuration = duration;
        this.state.remainingDuration = duration;
    }

    close() {
        this.state.targetState = 0;
        this.state.currentState = 0;
        this.state.openDuration = null;
        this.state.remainingDuration = null;
    }
}

export const CLOSURE_KINDS = {
    // [Type, EndProductType]: Rollershade 0 / RollerShade 0, Drapery 4 / CentralCurtain 16,
    // Awning 5 / AwningTerracePatio 19, Shutter 6 / RollerShutter 17, TiltBlindLift 8 /
    // ExteriorVenetianBlind 13 (the one with tilt).
    "roller-shade": () => covering(0, 0, false),
    drapery: () => covering(4, 16, false),
    awning: () => covering(5, 19, false),
    shutter: () => covering(6, 17, false),
    "venetian-blind": () => covering(8, 13, true),
    "garage-door": () => ({
        device: ClosureDevice.with(GarageDoorServer),
        state: {
            closureControl: {
                mainState: 0,
                currentErrorList: [],
                overallCurrentState: { position: 0, secureState: true },
                overallTargetState: { position: 0 },
                countdownTime: null,
            },
        },
        watched: [["closureControl", "overallCurrentState"], ["closureControl", "overallTargetState"]],
        async local(endpoint) {
            const open = endpoint.state.closureControl.overallCurrentState.position === 1;
            const position = open ? 0 : 1;
            const value = { position, secureState: !position };
            await endpoint.set({ closureControl: { overallCurrentState: value, overallTargetState: { position } } });
            return ["closureControl", "overallCurrentState", value];
        },
    }),
    "closure-panel": () => ({
        device: ClosurePanelDevice.with(PanelServer),
        state: {
            closureDimension: {
                currentState: { position: 10000 }, // fully closed
                targetState: { position: 10000 },
                resolution: 100, // 1.00 %
                stepValue: 1000, // 10.00 % a step
            },
        },
        watched: [["closureDimension", "currentState"], ["closureDimension", "targetState"]],
        // SIGUSR1: the panel's own button opens a closed panel and closes an open one.
        async local(endpoint) {
            const closed = endpoint.state.closureDimension.currentState.position === 10000;
            const value = { position: closed ? 0 : 10000 };
            await endpoint.set({ closureDimension: { currentState: value, targetState: value } });
            return ["closureDimension", "currentState", value];
        },
    }),
    "door-lock": () => ({
        device: DoorLockDevice.with(DoorLockServer),
        state: {
            doorLock: {
                lockState: 1, lockType: 0, actuatorEnabled: true, // Locked, deadbolt
                wrongCodeEntryLimit: 5, userCodeTemporaryDisableTime: 60,
                operatingMode: 0, supportedOperatingModes: { normal: true, vacation: true, privacy: false, noRemoteLockUnlock: false, passage: false, alwaysSet: 2047 },
            },
        },
        watched: [["doorLock", "lockState"]],
        async local(endpoint) {
            const value = endpoint.state.doorLock.lockState === 1 ? 2 : 1;
            await endpoint.set({ doorLock: { lockState: value } });
            return ["doorLock", "lockState", value];
        },
    }),
    "water-valve": () => ({
        device: WaterValveDevice.with(WaterValveServer),
        state: {
            valveConfigurationAndControl: {
                openDuration: null, defaultOpenDuration: 600, remainingDuration: null,
                currentState: 0, targetState: 0, // Closed
            },
        },
        watched: [["valveConfigurationAndControl", "currentState"]],
        async local(endpoint) {
            const value = endpoint.state.valveConfigurationAndControl.currentState === 1 ? 0 : 1;
            await endpoint.set({ valveConfigurationAndControl: { currentState: value, targetState: value } });
            return ["valveConfigurationAndControl", "currentState", value];
        },
    }),
};
