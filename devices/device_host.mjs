// Many virtual Matter devices in one process: matter.js loads once (about 2 s of CPU)
// instead of once per device, so a test module's dozens of devices start in a fraction
// of the time. Each device is the same as virtual_device.mjs's (device.mjs).
//
//   node device_host.mjs --state-dir DIR
//
// DIR holds every device's storage, each under its own id. The host reads one JSON
// object per line on stdin:
//   {"op": "start", "id": "fan-1", "kind": "fan", "port": 6100, "passcode": 20203001,
//    "discriminator": 3648, "label": "Test fan", "serial": ..., "levelTrim": ..., "travelS": ...}
//   {"op": "press", "id": "fan-1"}                 the device's button (SIGUSR1 of one device)
//   {"op": "action", "id": "b-1", "line": "press 2"}
//   {"op": "stop", "id": "fan-1"}                  closes the node; its storage stays
// and writes one line per fact, each prefixed by the device's id:
//   fan-1 PAIRING {...} / fan-1 READY {...} / fan-1 STATE {...} / fan-1 LOCAL {...}
//   fan-1 STOPPED {} / fan-1 ERROR {"message": "..."}
// and "- HOST {"pid": ...}" once it reads commands. A bad line is answered with an ERROR
// (id "-" when it has none) and changes nothing. SIGINT/SIGTERM close every device and exit 0.
import { Environment } from "@matter/main";
import { parseArgs } from "node:util";
import { createInterface } from "node:readline";
import { createDevice } from "./device.mjs";

const { values: opts } = parseArgs({ options: { "state-dir": { type: "string" } } });
if (!opts["state-dir"]) {
    console.error("--state-dir DIR is required");
    process.exit(2);
}
Environment.default.vars.set("storage.path", opts["state-dir"]);

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const devices = new Map();  // id -> handle, or null while it starts or stops

function say(id, word, data) {
    process.stdout.write(`${id} ${word} ${JSON.stringify(data)}\n`);
}

function integer(value, low, high, what) {
    if (!Number.isInteger(value) || value < low || value > high) {
        throw new Error(`${what} must be an integer from ${low} to ${high}`);
    }
    return value;
}

async function start(id, cmd) {
    const port = integer(cmd.port, 1, 65535, "port");
    const passcode = integer(cmd.passcode, 1, 99999998, "passcode");
    const discriminator = integer(cmd.discriminator, 0, 4095, "discriminator");
    devices.set(id, null);
    try {
        const handle = await createDevice(
            {
                id,
                kind: String(cmd.kind),
                port,
                passcode,
                discriminator,
                label: cmd.label === undefined ? undefined : String(cmd.label),
                serial: cmd.serial === undefined ? undefined : String(cmd.serial),
                levelTrim: cmd.levelTrim === undefined ? undefined : integer(cmd.levelTrim, 1, 254, "levelTrim"),
                travelMs: cmd.travelS === undefined ? 0 : integer(cmd.travelS, 1, 600, "travelS") * 1000,
            },
            (word, data) => say(id, word, data),
        );
        devices.set(id, handle);
        say(id, "READY", { pid: process.pid, port, kind: cmd.kind, commissioned: handle.commissioned });
    } catch (err) {
        devices.delete(id);
        throw err;
    }
}

async function stop(id) {
    const handle = devices.get(id);
    devices.set(id, null);
    try {
        await handle.close();
    } finally {
        devices.delete(id);
    }
    say(id, "STOPPED", {});
}

async function run(line) {
    let cmd;
    try {
        cmd = JSON.parse(line);
    } catch {
        throw Object.assign(new Error("not a JSON object"), { id: "-" });
    }
    if (cmd === null || typeof cmd !== "object" || Array.isArray(cmd)) {
        throw Object.assign(new Error("not a JSON object"), { id: "-" });
    }
    const id = cmd.id;
    if (typeof id !== "string" || !ID.test(id)) {
        throw Object.assign(new Error("id must be 1-64 letters, digits, '.', '_' or '-'"), { id: "-" });
    }
    const fail = message => Object.assign(new Error(message), { id });
    try {
        await dispatch(id, cmd, fail);
    } catch (err) {
        throw err.id === undefined ? fail(String(err?.message ?? err)) : err;
    }
}

async function dispatch(id, cmd, fail) {
    const handle = devices.get(id);
    switch (cmd.op) {
        case "start":
            if (devices.has(id)) throw fail(`device ${id} is already running`);
            return start(id, cmd);
        case "stop":
            if (!handle) throw fail(`device ${id} is not running`);
            return stop(id);
        case "press":
            if (!handle) throw fail(`device ${id} is not running`);
            return handle.local();
        case "action":
            if (!handle) throw fail(`device ${id} is not running`);
            return handle.action(String(cmd.line ?? ""));
        default:
            throw fail(`unknown op ${JSON.stringify(cmd.op)}; expected start, stop, press or action`);
    }
}

createInterface({ input: process.stdin }).on("line", line => {
    if (line.length > 4096) {
        say("-", "ERROR", { message: "line longer than 4096 characters" });
        return;
    }
    run(line).catch(err => say(err.id ?? "-", "ERROR", { message: String(err.message ?? err) }));
});

let closing = false;
async function shutdown() {
    if (closing) return;
    closing = true;
    try {
        await Promise.allSettled([...devices.values()].filter(Boolean).map(handle => handle.close()));
    } finally {
        process.exit(0);
    }
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
say("-", "HOST", { pid: process.pid });
