// One virtual Matter device (matter.js) for the bridge's demo and end-to-end tests, one
// per process (the device itself is device.mjs; device_host.mjs runs many in one process).
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
import { Environment } from "@matter/main";
import { parseArgs } from "node:util";
import { createInterface } from "node:readline";
import { createDevice, KIND_NAMES } from "./device.mjs";

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

function emit(word, data) {
    process.stdout.write(`${word} ${JSON.stringify(data)}\n`);
}

const kind = opts.kind;
if (!KIND_NAMES.includes(kind)) {
    console.error(`unknown --kind ${kind}; expected one of ${KIND_NAMES.join(", ")}`);
    process.exit(2);
}
if (!opts["state-dir"]) {
    console.error("--state-dir DIR is required (use a fresh folder for a device that is not yet paired)");
    process.exit(2);
}
const port = Number(opts.port);

Environment.default.vars.set("storage.path", opts["state-dir"]);

const device = await createDevice(
    {
        id: `atmosphere-${kind}`,
        kind,
        port,
        passcode: Number(opts.passcode),
        discriminator: Number(opts.discriminator),
        label: opts.label,
        serial: opts.serial,
        levelTrim: opts["level-trim"] === undefined ? undefined : Number(opts["level-trim"]),
        travelMs: opts["travel-s"] === undefined ? 0 : Number(opts["travel-s"]) * 1000,
    },
    emit,
);
emit("READY", { pid: process.pid, port, kind, commissioned: device.commissioned });

if (device.hasActions) {
    createInterface({ input: process.stdin }).on("line", line => {
        device.action(line).catch(err => console.error(`action failed: ${err.message}`));
    });
}

process.on("SIGUSR1", () => {
    device.local().catch(err => console.error(`local change failed: ${err}`));
});

let closing = false;
async function shutdown() {
    if (closing) return;
    closing = true;
    try {
        await device.close();
    } finally {
        process.exit(0);
    }
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
