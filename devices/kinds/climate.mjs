// Air movers and heaters: fan, air purifier, extractor hood, water heater.
import { FanDevice } from "@matter/main/devices/fan";
import { AirPurifierDevice } from "@matter/main/devices/air-purifier";
import { ExtractorHoodDevice } from "@matter/main/devices/extractor-hood";
import { WaterHeaterDevice } from "@matter/main/devices/water-heater";
import { FanControlServer } from "@matter/main/behaviors/fan-control";
import { HepaFilterMonitoringServer } from "@matter/main/behaviors/hepa-filter-monitoring";
import { ThermostatServer } from "@matter/main/behaviors/thermostat";
import { WaterHeaterManagementServer } from "@matter/main/behaviors/water-heater-management";
import { WaterHeaterModeServer } from "@matter/main/behaviors/water-heater-mode";

// FanMode → the speed it stands for (spec 4.4.6.1.1: Off 0 %, Low/Medium/High).
const MODE_PERCENT = { 0: 0, 1: 33, 2: 66, 3: 100 };

// matter.js's FanControl server leaves PercentCurrent and SpeedCurrent alone; a real fan
// follows the setting, and a new FanMode moves the setting.
class FollowingFanServer extends FanControlServer.with("MultiSpeed", "Auto") {
    initialize() {
        super.initialize();
        // Offline: a controller's write must not need write access to read-only PercentCurrent.
        this.reactTo(this.events.percentSetting$Changed, this.#followPercent, { offline: true });
        this.reactTo(this.events.speedSetting$Changed, this.#followSpeed, { offline: true });
        this.reactTo(this.events.fanMode$Changed, this.#followMode, { offline: true });
    }

    #followPercent(percent) {
        if (percent === null) return;
        this.state.percentCurrent = percent;
        const speed = Math.round((percent * this.state.speedMax) / 100);
        if (this.state.speedSetting !== speed) this.state.speedSetting = speed;
        if (this.state.speedCurrent !== speed) this.state.speedCurrent = speed;
    }

    #followSpeed(speed) {
        if (speed === null) return;
        this.state.speedCurrent = speed;
        const percent = Math.round((speed * 100) / this.state.speedMax);
        if (this.state.percentSetting !== percent) this.state.percentSetting = percent;
    }

    #followMode(mode) {
        const percent = MODE_PERCENT[mode];
        if (percent !== undefined && this.state.percentSetting !== percent) this.state.percentSetting = percent;
    }
}

const FAN_STATE = {
    fanMode: 0, fanModeSequence: 2, // Off; Off/Low/Med/High/Auto
    percentSetting: 0, percentCurrent: 0,
    speedMax: 3, speedSetting: 0, speedCurrent: 0,
};
const FAN_WATCHED = [
    ["fanControl", "fanMode"], ["fanControl", "percentSetting"], ["fanControl", "percentCurrent"],
    ["fanControl", "speedSetting"], ["fanControl", "speedCurrent"],
];

async function fanLocal(endpoint) {
    // The fan's own button steps the mode Off → Low → Medium → High → Off.
    const value = (endpoint.state.fanControl.fanMode + 1) % 4;
    await endpoint.set({ fanControl: { fanMode: value } });
    return ["fanControl", "fanMode", value];
}

const HEPA = {
    hepaFilterMonitoring: { condition: 87, degradationDirection: 1, changeIndication: 0 }, // 87 % left, down
};

// Water heater boost: matter.js declares Boost/CancelBoost; this heater records them.
class BoostingWaterHeaterServer extends WaterHeaterManagementServer {
    boost({ boostInfo }) {
        this.state.boostState = 1; // Active
        this.state.heatDemand = { immersionElement1: true };
        this.internal.boostDuration = boostInfo.duration;
    }

    cancelBoost() {
        this.state.boostState = 0;
        this.state.heatDemand = {};
    }
}

export const CLIMATE_KINDS = {
    fan: () => ({
        device: FanDevice.with(FollowingFanServer),
        state: { fanControl: FAN_STATE },
        watched: FAN_WATCHED,
        local: fanLocal,
    }),
    "air-purifier": () => ({
        device: AirPurifierDevice.with(FollowingFanServer, HepaFilterMonitoringServer.with("Condition", "Warning")),
        state: { fanControl: FAN_STATE, ...HEPA },
        watched: [...FAN_WATCHED, ["hepaFilterMonitoring", "condition"]],
        local: fanLocal,
    }),
    "extractor-hood": () => ({
        device: ExtractorHoodDevice.with(FollowingFanServer, HepaFilterMonitoringServer.with("Condition", "Warning")),
        state: { fanControl: FAN_STATE, ...HEPA },
        watched: FAN_WATCHED,
        local: fanLocal,
    }),
    "water-heater": () => ({
        device: WaterHeaterDevice.with(
            ThermostatServer.with("Heating"),
            BoostingWaterHeaterServer,
            WaterHeaterModeServer,
        ),
        state: {
            thermostat: {
                localTemperature: 5200, occupiedHeatingSetpoint: 5500, // 52 °C water, 55 °C set
                minHeatSetpointLimit: 3000, maxHeatSetpointLimit: 6500,
                absMinHeatSetpointLimit: 3000, absMaxHeatSetpointLimit: 6500,
                controlSequenceOfOperation: 2, systemMode: 4, // heating only, Heat
            },
            waterHeaterManagement: { heaterTypes: { immersionElement1: true }, heatDemand: {}, boostState: 0 },
            waterHeaterMode: {
                supportedModes: [
                    { label: "Off", mode: 0, modeTags: [{ value: 16384 }] },
                    { label: "Manual", mode: 1, modeTags: [{ value: 16385 }] },
                    { label: "Timed", mode: 2, modeTags: [{ value: 16386 }] },
                ],
                currentMode: 1,
            },
        },
        watched: [
            ["thermostat", "occupiedHeatingSetpoint"], ["thermostat", "systemMode"],
            ["waterHeaterManagement", "boostState"], ["waterHeaterMode", "currentMode"],
        ],
        async local(endpoint) {
            const value = endpoint.state.thermostat.localTemperature + 100;
            await endpoint.set({ thermostat: { localTemperature: value } });
            return ["thermostat", "localTemperature", value];
        },
    }),
};
