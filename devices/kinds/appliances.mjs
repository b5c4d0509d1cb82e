// Appliances with an operational state and modes: robot vacuum (with rooms), laundry
// washer, dishwasher. matter.js declares their Pause/Resume/Start/Stop/GoHome commands but
// implements none; these servers implement them the way the spec describes.
import { RoboticVacuumCleanerDevice } from "@matter/main/devices/robotic-vacuum-cleaner";
import { LaundryWasherDevice } from "@matter/main/devices/laundry-washer";
import { DishwasherDevice } from "@matter/main/devices/dishwasher";
import { RvcOperationalStateServer } from "@matter/main/behaviors/rvc-operational-state";
import { RvcRunModeServer } from "@matter/main/behaviors/rvc-run-mode";
import { RvcCleanModeServer } from "@matter/main/behaviors/rvc-clean-mode";
import { ServiceAreaServer } from "@matter/main/behaviors/service-area";
import { OperationalStateServer } from "@matter/main/behaviors/operational-state";
import { LaundryWasherModeServer } from "@matter/main/behaviors/laundry-washer-mode";
import { DishwasherModeServer } from "@matter/main/behaviors/dishwasher-mode";

// OperationalStateEnum (spec 1.14.4.4) and RVC additions (7.4.4.1).
const STOPPED = 0, RUNNING = 1, PAUSED = 2, ERROR = 3, SEEKING_CHARGER = 64, CHARGING = 65, DOCKED = 66;
const OK = { commandResponseState: { errorStateId: 0 } };
const COMMAND_INVALID_IN_STATE = { commandResponseState: { errorStateId: 3 } };

function stateList(ids) {
    return ids.map(operationalStateId => ({ operationalStateId }));
}

// RVC run modes (RvcRunMode tags: Idle 16384, Cleaning 16385) and clean modes (Vacuum 16385, Mop 16386).
const IDLE_MODE = 0, CLEANING_MODE = 1;

class VacuumOperationalStateServer extends RvcOperationalStateServer {
    pause() {
        if (![RUNNING, SEEKING_CHARGER].includes(this.state.operationalState)) return COMMAND_INVALID_IN_STATE;
        this.state.operationalState = PAUSED;
        return OK;
    }

    resume() {
        if (this.state.operationalState !== PAUSED) return COMMAND_INVALID_IN_STATE;
        this.state.operationalState = RUNNING;
        return OK;
    }

    goHome() {
        // Straight back to the dock (a virtual vacuum has no way to drive).
        this.state.operationalState = DOCKED;
        return OK;
    }
}

// Choosing the Cleaning run mode starts cleaning; Idle sends it home.
class VacuumRunModeServer extends RvcRunModeServer {
    initialize() {
        super.initialize();
        this.reactTo(this.events.currentMode$Changed, this.#follow);
    }

    async #follow(mode) {
        const cleaning = mode === CLEANING_MODE;
        const operationalState = cleaning ? RUNNING : DOCKED;
        await this.endpoint.setStateOf(VacuumOperationalStateServer, { operationalState });
        // It cleans the first room it was sent to first (CurrentArea); docked, it is in none.
        const selected = this.endpoint.stateOf("serviceArea").selectedAreas;
        const currentArea = cleaning && selected.length ? selected[0] : null;
        await this.endpoint.setStateOf("serviceArea", { currentArea });
    }
}

const ROOMS = ["Kitchen", "Living room", "Bedroom"];

// A programme takes 90 minutes: CountdownTime (s) counts from there once started.
const PROGRAMME_S = 5400;

class OperationalServer extends OperationalStateServer {
    start() {
        if (this.state.operationalState === RUNNING) return COMMAND_INVALID_IN_STATE;
        this.state.operationalState = RUNNING;
        this.state.countdownTime = PROGRAMME_S;
        return OK;
    }

    stop() {
        this.state.operationalState = STOPPED;
        this.state.countdownTime = null;
        return OK;
    }

    pause() {
        if (this.state.operationalState !== RUNNING) return COMMAND_INVALID_IN_STATE;
        this.state.operationalState = PAUSED;
        return OK;
    }

    resume() {
        if (this.state.operationalState !== PAUSED) return COMMAND_INVALID_IN_STATE;
        this.state.operationalState = RUNNING;
        return OK;
    }
}

const OPERATIONAL = {
    operationalStateList: stateList([STOPPED, RUNNING, PAUSED, ERROR]),
    operationalState: STOPPED,
    operationalError: { errorStateId: 0 },
    phaseList: null,
    currentPhase: null,
    countdownTime: null,
};

async function startStop(endpoint) {
    const running = endpoint.state.operationalState.operationalState === RUNNING;
    const value = running ? STOPPED : RUNNING;
    await endpoint.set({ operationalState: { operationalState: value } });
    return ["operationalState", "operationalState", value];
}

export const APPLIANCE_KINDS = {
    "robot-vacuum": () => ({
        device: RoboticVacuumCleanerDevice.with(
            VacuumOperationalStateServer, VacuumRunModeServer, RvcCleanModeServer,
            ServiceAreaServer.with("Maps"),
        ),
        state: {
            rvcOperationalState: {
                operationalStateList: stateList([STOPPED, RUNNING, PAUSED, ERROR, SEEKING_CHARGER, CHARGING, DOCKED]),
                operationalState: DOCKED,
                operationalError: { errorStateId: 0 },
                phaseList: null,
                currentPhase: null,
            },
            rvcRunMode: {
                supportedModes: [
                    { label: "Idle", mode: IDLE_MODE, modeTags: [{ value: 16384 }] },
                    { label: "Cleaning", mode: CLEANING_MODE, modeTags: [{ value: 16385 }] },
                    { label: "Mapping", mode: 2, modeTags: [{ value: 16386 }] },
                ],
                currentMode: IDLE_MODE,
            },
            rvcCleanMode: {
                supportedModes: [
                    { label: "Vacuum", mode: 1, modeTags: [{ value: 16385 }] },
                    { label: "Mop", mode: 2, modeTags: [{ value: 16386 }] },
                    { label: "Vacuum and mop", mode: 3, modeTags: [{ value: 16385 }, { value: 16386 }] },
                ],
                currentMode: 1,
            },
            serviceArea: {
                supportedMaps: [{ mapId: 1, name: "Ground floor" }],
                supportedAreas: ROOMS.map((locationName, i) => ({
                    areaId: i + 1, mapId: 1,
                    areaInfo: { locationInfo: { locationName, floorNumber: 0, areaType: null }, landmarkInfo: null },
                })),
                selectedAreas: [],
                currentArea: null,
                estimatedEndTime: null,
            },
        },
        watched: [
            ["rvcOperationalState", "operationalState"], ["rvcRunMode", "currentMode"],
            ["rvcCleanMode", "currentMode"], ["serviceArea", "selectedAreas"],
            ["serviceArea", "currentArea"],
        ],
        // SIGUSR1: the vacuum's own button starts a clean or sends it home.
        async local(endpoint) {
            const value = endpoint.state.rvcRunMode.currentMode === CLEANING_MODE ? IDLE_MODE : CLEANING_MODE;
            await endpoint.set({ rvcRunMode: { currentMode: value } });
            return ["rvcRunMode", "currentMode", value];
        },
    }),
    "laundry-washer": () => ({
        device: LaundryWasherDevice.with(OperationalServer, LaundryWasherModeServer),
        state: {
            operationalState: OPERATIONAL,
            laundryWasherMode: {
                // LaundryWasherMode tags: Normal 16384, Delicate 16385, Heavy 16386, Whites 16387.
                supportedModes: [
                    { label: "Cottons", mode: 0, modeTags: [{ value: 16384 }] },
                    { label: "Wool", mode: 1, modeTags: [{ value: 16385 }] },
                    { label: "Heavy duty", mode: 2, modeTags: [{ value: 16386 }] },
                    { label: "Whites", mode: 3, modeTags: [{ value: 16387 }] },
                ],
                currentMode: 0,
            },
        },
        watched: [
            ["operationalState", "operationalState"], ["operationalState", "countdownTime"],
            ["laundryWasherMode", "currentMode"],
        ],
        local: startStop,
    }),
    dishwasher: () => ({
        device: DishwasherDevice.with(OperationalServer, DishwasherModeServer),
        state: {
            operationalState: OPERATIONAL,
            dishwasherMode: {
                // DishwasherMode tags: Normal 16384, Heavy 16385, Light 16386.
                supportedModes: [
                    { label: "Eco", mode: 0, modeTags: [{ value: 16384 }] },
                    { label: "Intensive", mode: 1, modeTags: [{ value: 16385 }] },
                    { label: "Quick", mode: 2, modeTags: [{ value: 16386 }] },
                ],
                currentMode: 0,
            },
        },
        watched: [["operationalState", "operationalState"], ["dishwasherMode", "currentMode"]],
        local: startStop,
    }),
};
