// Every device kind beyond the original lights and thermostat, by --kind name.
//
// A kind is a function returning:
//   device   - the matter.js endpoint type (device type with its cluster servers)
//   state    - the endpoint's initial state, by behavior id
//   watched  - [behavior, attribute] pairs reported as STATE lines when they change
//   local    - async (endpoint) => [behavior, attribute, value]: the device's own button
//              (SIGUSR1), reported as a LOCAL line
//   setup    - optional (endpoint, emit) => void: wires the kind's own events before the
//              node starts (a light switch reports its bindings as BOUND/UNBOUND lines)
//   actions  - optional {name: async (endpoint, ...args) => [behavior, attribute, value]},
//              run by a line "name arg..." on stdin (e.g. "press 2" on a button)
import { SENSOR_KINDS } from "./sensors.mjs";
import { CLIMATE_KINDS } from "./climate.mjs";
import { SWITCH_KINDS } from "./switches.mjs";
import { ENERGY_KINDS } from "./energy.mjs";
import { APPLIANCE_KINDS } from "./appliances.mjs";
import { CLOSURE_KINDS } from "./closures.mjs";
import { KITCHEN_KINDS } from "./kitchen.mjs";
import { SPEAKER_KINDS } from "./speakers.mjs";

export const MORE_KINDS = {
    ...SWITCH_KINDS,
    ...SENSOR_KINDS,
    ...CLIMATE_KINDS,
    ...ENERGY_KINDS,
    ...APPLIANCE_KINDS,
    ...CLOSURE_KINDS,
    ...KITCHEN_KINDS,
    ...SPEAKER_KINDS,
};
