// A chime (Matter 1.4) and a cook surface (a cooktop's zone, set by named temperature
// levels). matter.js declares PlayChimeSound and TemperatureControl's SetTemperature but
// implements neither; these servers implement them the way the spec describes.
import { ChimeDevice } from "@matter/main/devices/chime";
import { CookSurfaceDevice, CookSurfaceRequirements } from "@matter/main/devices/cook-surface";
import { ChimeServer } from "@matter/main/behaviors/chime";
import { Status, StatusResponseError } from "@matter/main/types";

// The device script's line writer, handed over in setup(): a chime that plays reports it.
let report = () => {};

class PlayingChimeServer extends ChimeServer {
    playChimeSound(request) {
        // Chime 1.2.6.1: play the given installed sound, else the selected one; a
        // disabled chime plays nothing.
        const chimeId = request?.chimeId ?? this.state.selectedChime;
        if (!this.state.installedChimeSounds.some(s => s.chimeId === chimeId)) {
            throw new StatusResponseError(`no chime sound ${chimeId}`, Status.NotFound);
        }
        if (this.state.enabled) report("STATE", { cluster: "chime", attribute: "played", value: chimeId });
    }
}

class LevelTemperatureServer extends CookSurfaceRequirements.TemperatureControlServer {
    setTemperature(request) {
        // TemperatureControl 8.2.6.1: with the TemperatureLevel feature the target is an
        // index into SupportedTemperatureLevels; anything else is a ConstraintError.
        const level = request.targetTemperatureLevel;
        if (level === undefined || level < 0 || level >= this.state.supportedTemperatureLevels.length) {
            throw new StatusResponseError(`no temperature level ${level}`, Status.ConstraintError);
        }
        this.state.selectedTemperatureLevel = level;
    }
}

export const KITCHEN_KINDS = {
    chime: () => ({
        device: ChimeDevice.with(PlayingChimeServer),
        state: {
            chime: {
                installedChimeSounds: [
                    { chimeId: 0, name: "Ding Dong" },
                    { chimeId: 1, name: "Westminster" },
                    { chimeId: 2, name: "Birdsong" },
                ],
                selectedChime: 1,
                enabled: true,
            },
        },
        watched: [["chime", "selectedChime"], ["chime", "enabled"]],
        setup(_endpoint, emit) {
            report = emit;
        },
        // SIGUSR1: the chime's own button plays it.
        async local(endpoint) {
            const chimeId = endpoint.state.chime.selectedChime;
            report("STATE", { cluster: "chime", attribute: "played", value: chimeId });
            return ["chime", "played", chimeId];
        },
    }),
    "cook-surface": () => ({
        device: CookSurfaceDevice.with(
            CookSurfaceRequirements.OnOffServer, LevelTemperatureServer,
            CookSurfaceRequirements.TemperatureMeasurementServer,
        ),
        state: {
            onOff: { onOff: true },
            temperatureControl: {
                supportedTemperatureLevels: ["Low", "Medium", "High"],
                selectedTemperatureLevel: 0,
            },
            // 120.00 °C at the zone (TemperatureMeasurement in 0.01 °C).
            temperatureMeasurement: { measuredValue: 12000, minMeasuredValue: 0, maxMeasuredValue: 30000 },
        },
        watched: [["temperatureControl", "selectedTemperatureLevel"], ["onOff", "onOff"]],
        // SIGUSR1: the zone's own knob steps its level round.
        async local(endpoint) {
            const levels = endpoint.state.temperatureControl.supportedTemperatureLevels.length;
            const value = (endpoint.state.temperatureControl.selectedTemperatureLevel + 1) % levels;
            await endpoint.set({ temperatureControl: { selectedTemperatureLevel: value } });
            return ["temperatureControl", "selectedTemperatureLevel", value];
        },
    }),
};
