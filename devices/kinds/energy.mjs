// Energy kinds: a metering plug and an EV charger. Units are the spec's: mW, mV, mA, mWh.
import { OnOffPlugInUnitDevice } from "@matter/main/devices/on-off-plug-in-unit";
import { EnergyEvseDevice } from "@matter/main/devices/energy-evse";
import { ElectricalPowerMeasurementServer } from "@matter/main/behaviors/electrical-power-measurement";
import { ElectricalEnergyMeasurementServer } from "@matter/main/behaviors/electrical-energy-measurement";
import { PowerTopologyServer } from "@matter/main/behaviors/power-topology";
import { EnergyEvseServer } from "@matter/main/behaviors/energy-evse";
import { EnergyEvseModeServer } from "@matter/main/behaviors/energy-evse-mode";

// MeasurementTypeEnum (spec 2.1.4 / 9.x): 1 Voltage, 2 ActiveCurrent, 5 ActivePower, 14 ElectricalEnergy.
function accuracy(measurementType, min, max) {
    return {
        measurementType, measured: true, minMeasuredValue: min, maxMeasuredValue: max,
        accuracyRanges: [{ rangeMin: min, rangeMax: max, percentMax: 50 }],
    };
}

const POWER = ElectricalPowerMeasurementServer.with("AlternatingCurrent");
const ENERGY = ElectricalEnergyMeasurementServer.with("ImportedEnergy", "CumulativeEnergy");

function meterState(activePower, cumulativeImported) {
    return {
        electricalPowerMeasurement: {
            powerMode: 2, // AC
            numberOfMeasurementTypes: 3,
            accuracy: [accuracy(1, 0, 250_000), accuracy(2, 0, 16_000), accuracy(5, 0, 3_680_000)],
            voltage: 230_000, activeCurrent: 1000, activePower,
        },
        electricalEnergyMeasurement: {
            accuracy: accuracy(14, 0, 1_000_000_000),
            cumulativeEnergyImported: { energy: cumulativeImported },
        },
    };
}

// SIGUSR1: the load draws 10 W more and 1 Wh more energy is counted (with its event).
async function meterStep(endpoint) {
    const power = endpoint.state.electricalPowerMeasurement.activePower + 10_000;
    const energy = endpoint.state.electricalEnergyMeasurement.cumulativeEnergyImported.energy + 1000;
    await endpoint.set({ electricalPowerMeasurement: { activePower: power } });
    await endpoint.act(agent => agent.electricalEnergyMeasurement.setMeasurement({
        cumulativeEnergy: { imported: { energy } },
    }));
    return ["electricalPowerMeasurement", "activePower", power];
}

// An EVSE that accepts EnableCharging / Disable (matter.js declares them unimplemented).
class ChargingEvseServer extends EnergyEvseServer {
    enableCharging({ chargingEnabledUntil, minimumChargeCurrent, maximumChargeCurrent }) {
        this.state.supplyState = 1; // ChargingEnabled
        this.state.chargingEnabledUntil = chargingEnabledUntil;
        this.state.minimumChargeCurrent = minimumChargeCurrent;
        this.state.maximumChargeCurrent = maximumChargeCurrent;
    }

    disable() {
        this.state.supplyState = 0; // Disabled
        this.state.chargingEnabledUntil = null;
    }
}

export const ENERGY_KINDS = {
    // On/off plug with power and energy metering (matter.js adds the Electrical Sensor type).
    "energy-plug": () => ({
        device: OnOffPlugInUnitDevice.with(POWER, ENERGY, PowerTopologyServer),
        state: { onOff: { onOff: true }, ...meterState(120_000, 1_000_000) }, // 120 W, 1 kWh
        watched: [["onOff", "onOff"], ["electricalPowerMeasurement", "activePower"]],
        local: meterStep,
    }),
    "ev-charger": () => ({
        device: EnergyEvseDevice.with(ChargingEvseServer, EnergyEvseModeServer, POWER, ENERGY, PowerTopologyServer),
        state: {
            energyEvse: {
                state: 1, // PluggedInNoDemand
                supplyState: 0, // Disabled
                faultState: 0,
                chargingEnabledUntil: null,
                circuitCapacity: 32_000, minimumChargeCurrent: 6000, maximumChargeCurrent: 0,
                sessionId: null, sessionDuration: null, sessionEnergyCharged: null,
            },
            energyEvseMode: {
                supportedModes: [
                    { label: "Manual", mode: 0, modeTags: [{ value: 16384 }] },
                    { label: "Solar", mode: 1, modeTags: [{ value: 16386 }] },
                ],
                currentMode: 0,
            },
            ...meterState(0, 5_000_000),
        },
        watched: [["energyEvse", "supplyState"], ["energyEvseMode", "currentMode"]],
        local: meterStep,
    }),
};
