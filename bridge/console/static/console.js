// Atmosphere console: fills the server-rendered page shells from the bridge's /v1 API and
// follows the /v1/events WebSocket. Every request carries the session cookie (the server
// turns it into the session's bearer token) and, when it changes state, the CSRF secret.

const csrf = document.querySelector('meta[name="csrf"]')?.content ?? "";
const content = document.getElementById("content");
const pageName = content?.dataset.page ?? "";

// ---- helpers -------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (response.status === 401) { location.assign("/console/signin"); }
  if (!response.ok) {
    const err = new Error(data?.error?.message ?? `HTTP ${response.status}`);
    err.code = data?.error?.code;
    throw err;
  }
  return data;
}

function status(text, kind = "info") {
  let box = document.getElementById("status");
  if (!box) {
    box = el("p", { id: "status", role: "status", "aria-live": "polite" });
    content.before(box);
  }
  box.className = kind;
  box.textContent = text;
}

const SECRET_KEY = /pin|code|pass|secret|token|key/i;
function redact(params) {
  const out = {};
  for (const [k, v] of Object.entries(params ?? {})) out[k] = SECRET_KEY.test(k) ? "••••" : v;
  return JSON.stringify(out);
}

// Follow /v1/events (reconnecting); the promise settles when the first socket is open.
function events(types, onEvent) {
  let delay = 500;
  let opened;
  const ready = new Promise((resolve) => { opened = resolve; });
  const open = () => {
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/v1/events?types=${types}`);
    ws.addEventListener("open", () => { delay = 500; document.body.dataset.live = "yes"; opened(); });
    ws.addEventListener("message", (msg) => {
      try { onEvent(JSON.parse(msg.data)); } catch (err) { console.error(err); }
    });
    ws.addEventListener("close", () => {
      document.body.dataset.live = "no";
      setTimeout(open, delay);
      delay = Math.min(delay * 2, 10000);
    });
  };
  open();
  return ready;
}

// ---- home ----------------------------------------------------------------------------

const devices = new Map();

function attr(device, cluster, attribute) {
  return device.attrs[`${device.endpoint_id}/${cluster}/${attribute}`];
}

function tool(device, match) {
  return device.tools.find((t) => match.includes(t.command) || match.includes(t.attribute));
}

function describe(device) {
  const parts = [];
  const on = attr(device, 6, 0);
  if (on !== undefined) parts.push(on ? "On" : "Off");
  const level = attr(device, 8, 0);
  if (level !== undefined && level !== null) parts.push(`${Math.round((level / 254) * 100)} %`);
  const mode = attr(device, 0x300, 8);
  if (mode === 2 && attr(device, 0x300, 7)) parts.push(`${Math.round(1e6 / attr(device, 0x300, 7))} K`);
  else if (attr(device, 0x300, 0) !== undefined) {
    parts.push(`hue ${Math.round((attr(device, 0x300, 0) / 254) * 360)}°, saturation ${Math.round((attr(device, 0x300, 1) / 254) * 100)} %`);
  }
  const temp = attr(device, 0x201, 0) ?? attr(device, 0x402, 0);
  if (temp !== undefined && temp !== null) parts.push(`${(temp / 100).toFixed(1)} °C`);
  const heat = attr(device, 0x201, 0x12);
  if (heat !== undefined) parts.push(`set to ${(heat / 100).toFixed(1)} °C`);
  const lock = attr(device, 0x101, 0);
  if (lock !== undefined) parts.push({ 1: "Locked", 2: "Unlocked" }[lock] ?? "Lock jammed");
  const cover = attr(device, 0x102, 0xE);
  if (cover !== undefined && cover !== null) parts.push(`${100 - cover / 100} % open`);
  if (!device.available) parts.push("unavailable");
  // A newer kind tells its state in its readings list instead.
  return parts.join(" · ") || (readings(device).length ? "" : "—");
}

// The newer kinds' readings, from the device's state in human units (the bridge converts):
// [state field, label, how the value reads]. Fields the summary line already tells (on/off,
// brightness, temperatures, a cover's position, a lock) are not repeated.
const words = (v) => String(v).replaceAll("_", " ");
const amount = (v) => (v && typeof v === "object" ? `${v.value} ${v.unit}` : String(v));
const yesNo = (yes, no) => (v) => (v ? yes : no);
const READINGS = [
  ["fan_mode", "Fan mode", words], ["fan_speed_percent", "Fan speed", (v) => `${v} %`],
  ["fan_step", "Speed step", String],
  ["status", "Status", words], ["error", "Error", words], ["cycle", "Cycle", String],
  ["clean_mode", "Cleaning mode", String], ["current_area", "Now in", String],
  ["selected_areas", "Rooms to clean", (v) => (v.length ? v.join(", ") : "none")],
  ["minutes_left", "Time left", (v) => `${v} min`], ["mode", "Mode", words],
  ["valve", "Valve", words], ["valve_percent_open", "Valve open", (v) => `${v} %`],
  ["minutes_until_closed", "Closes in", (v) => `${v} min`],
  ["closure", "Door", words], ["motion", "Moving", words],
  ["power_w", "Power", (v) => `${v} W`], ["energy_kwh", "Energy", (v) => `${v} kWh`],
  ["energy_exported_kwh", "Energy exported", (v) => `${v} kWh`],
  ["voltage_v", "Voltage", (v) => `${v} V`], ["current_a", "Current", (v) => `${v} A`],
  ["session_energy_kwh", "This session", (v) => `${v} kWh`],
  ["charger_state", "Charger", words], ["supply", "Supply", words], ["charging_mode", "Charging mode", String],
  ["boost", "Boost", yesNo("on", "off")], ["heater_mode", "Heater mode", String],
  ["tank_percent", "Hot water", (v) => `${v} %`],
  ["illuminance_lux", "Light", (v) => `${v} lx`], ["pressure_hpa", "Pressure", (v) => `${v} hPa`],
  ["flow_m3h", "Flow", (v) => `${v} m³/h`], ["humidity_percent", "Humidity", (v) => `${v} %`],
  ["soil_moisture_percent", "Soil moisture", (v) => `${v} %`],
  ["leak", "Leak", yesNo("LEAK", "dry")], ["freeze", "Freeze", yesNo("FREEZING", "no frost")],
  ["rain", "Rain", yesNo("raining", "dry")], ["contact", "Contact", yesNo("closed", "open")],
  ["occupied", "Occupancy", yesNo("occupied", "empty")],
  ["smoke", "Smoke", words], ["co_alarm", "CO alarm", words], ["battery_alert", "Battery alarm", words],
  ["air_quality", "Air quality", words], ["co2", "CO₂", amount], ["co", "CO", amount],
  ["pm1", "PM1", amount], ["pm25", "PM2.5", amount], ["pm10", "PM10", amount],
  ["tvoc", "TVOC", amount], ["no2", "NO₂", amount], ["ozone", "Ozone", amount],
  ["formaldehyde", "Formaldehyde", amount], ["radon", "Radon", amount],
  ["hepa_filter_percent", "HEPA filter", (v) => `${v} %`], ["hepa_filter", "Filter", words],
  ["carbon_filter_percent", "Carbon filter", (v) => `${v} %`],
  ["battery_percent", "Battery", (v) => `${v} %`], ["target_temperature", "Set to", (v) => `${v} °C`],
  ["cook_minutes", "Cooking time", (v) => `${v} min`], ["selected_mode", "Mode", String],
];

function readings(device) {
  const state = device.state ?? {};
  return READINGS.filter(([field]) => state[field] !== undefined && state[field] !== null)
    .map(([field, label, read]) => [field, label, read(state[field])]);
}

function readingList(device) {
  return el("dl", { class: "readings", "data-role": "readings", "aria-label": `Readings of ${device.name}` },
    readings(device).flatMap(([field, label, text]) => [el("dt", {}, label), el("dd", { "data-field": field }, text)]));
}

async function invoke(name, params, label, dangerous = false) {
  status(dangerous ? `${label}: waiting for a person's approval (Approvals page)…` : `${label}…`);
  try {
    const res = await api("POST", "/v1/invoke", { tool: name, params });
    status(`${label}: done`, "ok");
    return res;
  } catch (err) {
    status(`${label}: ${err.message}`, "error");
    return null;
  }
}

function deviceCard(device) {
  const id = `dev-${device.id}`;
  const controls = [];
  const toggle = tool(device, ["Toggle"]);
  if (toggle) {
    controls.push(el("button", {
      type: "button", class: "toggle", "data-role": "toggle", "aria-pressed": attr(device, 6, 0) ? "true" : "false",
      "aria-label": `Switch ${device.name}`, onclick: () => invoke(toggle.name, {}, `Switch ${device.name}`),
    }, "Switch"));
  }
  const level = tool(device, ["MoveToLevelWithOnOff", "MoveToLevel"]);
  if (level) {
    const input = el("input", {
      type: "range", min: 1, max: 100, id: `${id}-level`, "data-role": "level",
      value: Math.round(((attr(device, 8, 0) ?? 254) / 254) * 100),
      onchange: (e) => invoke(level.name, { percent: Number(e.target.value) }, `Brightness of ${device.name}`),
    });
    controls.push(el("label", { for: `${id}-level` }, "Brightness"), input);
  }
  const setpoint = device.tools.find((t) => t.params.includes("celsius") && t.attribute);
  if (setpoint) {
    const input = el("input", { type: "number", step: "0.5", min: 5, max: 35, id: `${id}-setpoint`,
      value: ((attr(device, 0x201, 0x12) ?? 2000) / 100).toFixed(1) });
    controls.push(el("label", { for: `${id}-setpoint` }, "Heat to °C"), input,
      el("button", { type: "button", onclick: () => invoke(setpoint.name, { celsius: Number(input.value) }, `Set ${device.name}`) }, "Set"));
  }
  controls.push(...kindControls(device, id));
  return el("article", { class: "device card", id, "data-device": device.id, "aria-labelledby": `${id}-name` },
    el("h3", { id: `${id}-name` }, device.name),
    el("p", { class: "state", "data-role": "state" }, describe(device)),
    readingList(device),
    el("div", { class: "controls" }, controls));
}

// A button per plain action of the device (its tools' row suffixes), in this order.
const BUTTONS = [
  ["lock", "Lock"], ["unlock", "Unlock"], ["open", "Open"], ["close", "Close"], ["stop", "Stop"],
  ["start", "Start"], ["pause", "Pause"], ["resume", "Resume"], ["return_to_base", "Dock"],
  ["boost", "Boost"], ["cancel_boost", "End boost"],
  ["enable_charging", "Allow charging"], ["disable_charging", "Stop charging"],
];
// Choices among the device's own names (modes, cycles, rooms): [suffix, parameter, label].
const CHOICES = [
  ["set_fan_mode", "mode", "Fan mode"], ["set_cycle", "mode", "Cycle"],
  ["set_clean_mode", "mode", "Cleaning mode"], ["set_heater_mode", "mode", "Heater mode"],
  ["set_charging_mode", "mode", "Charging mode"], ["set_mode", "mode", "Mode"],
];
const CURRENT = { set_fan_mode: "fan_mode", set_cycle: "cycle", set_clean_mode: "clean_mode",
  set_heater_mode: "heater_mode", set_charging_mode: "charging_mode", set_mode: "mode" };

function kindControls(device, id) {
  const actions = device.actions ?? {};
  const out = [];
  for (const [suffix, label] of BUTTONS) {
    const a = actions[suffix];
    if (!a) continue;
    const params = {};
    // A boost without a length boosts for the heater's default; ask for 30 minutes.
    if (suffix === "boost" && a.params.minutes) params.minutes = 30;
    out.push(el("button", { type: "button", "data-action": suffix, "aria-label": `${label} ${device.name}`,
      onclick: () => invoke(a.name, params, `${label} ${device.name}`, a.dangerous) }, label));
  }
  for (const [suffix, param, label] of CHOICES) {
    const a = actions[suffix];
    const names = a?.params[param]?.enum;
    if (!names) continue;
    const sid = `${id}-${suffix}`;
    const select = el("select", { id: sid, "data-role": suffix, onchange: (e) => invoke(a.name, { [param]: e.target.value }, `${label} of ${device.name}`, a.dangerous) },
      names.map((n) => el("option", { value: n }, n)));
    select.value = device.state?.[CURRENT[suffix]] ?? "";
    out.push(el("label", { for: sid }, label), select);
  }
  const speed = actions.set_fan_speed;
  if (speed) {
    const sid = `${id}-fan-speed`;
    out.push(el("label", { for: sid }, "Fan speed %"), el("input", {
      type: "range", min: 0, max: 100, step: 1, id: sid, "data-role": "fan-speed",
      value: device.state?.fan_speed_percent ?? 0,
      onchange: (e) => invoke(speed.name, { percent: Number(e.target.value) }, `Fan speed of ${device.name}`),
    }));
  }
  const rooms = actions.clean_areas;
  const areas = rooms?.params.areas?.items?.enum;
  if (areas) {
    const sid = `${id}-area`;
    const select = el("select", { id: sid, "data-role": "area" }, areas.map((n) => el("option", { value: n }, n)));
    out.push(el("label", { for: sid }, "Room to clean"), select,
      el("button", { type: "button", "data-action": "clean_areas", "aria-label": `Clean the chosen room with ${device.name}`,
        onclick: () => invoke(rooms.name, { areas: [select.value] }, `Clean ${select.value} with ${device.name}`) }, "Clean room"));
  }
  return out;
}

function refreshCard(device) {
  const card = document.getElementById(`dev-${device.id}`);
  if (!card) return;
  card.querySelector('[data-role="state"]').textContent = describe(device);
  card.querySelector('[data-role="readings"]')?.replaceWith(readingList(device));
  for (const [suffix, field] of Object.entries(CURRENT)) {
    const select = card.querySelector(`select[data-role="${suffix}"]`);
    if (select && document.activeElement !== select && device.state?.[field] != null) select.value = device.state[field];
  }
  const speed = card.querySelector('[data-role="fan-speed"]');
  if (speed && document.activeElement !== speed && device.state?.fan_speed_percent != null) speed.value = device.state.fan_speed_percent;
  card.querySelector('[data-role="toggle"]')?.setAttribute("aria-pressed", attr(device, 6, 0) ? "true" : "false");
  const level = card.querySelector('[data-role="level"]');
  if (level && document.activeElement !== level && attr(device, 8, 0) != null) {
    level.value = Math.round((attr(device, 8, 0) / 254) * 100);
  }
}

// Which rules watch or act on each device card (the rules the session may see).
async function markRuleDevices() {
  let listed;
  try { listed = await api("GET", "/v1/automations"); } catch { return; }
  for (const rule of listed.rules) {
    for (const id of rule.devices) {
      const card = document.getElementById(`dev-${id}`);
      if (!card) continue;
      let line = card.querySelector('[data-role="rules"]');
      if (!line) { line = el("p", { class: "rules-of", "data-role": "rules" }, "Rules:"); card.append(line); }
      line.append(` ${rule.name}`);
    }
  }
}

// A device reported a change: read its state in human units again (once per burst).
const rereads = new Map();
function reread(device) {
  if (rereads.has(device.id)) return;
  rereads.set(device.id, setTimeout(async () => {
    rereads.delete(device.id);
    try {
      const data = await api("GET", `/console/api/state?device=${encodeURIComponent(device.id)}`);
      const fresh = data.devices[0];
      if (!fresh) return;
      device.state = fresh.state;
      device.actions = fresh.actions;
      refreshCard(device);
    } catch (err) { console.error(err); }
  }, 150));
}

async function home() {
  const data = await api("GET", "/console/api/state");
  devices.clear();
  const rooms = new Map();
  for (const device of data.devices) {
    devices.set(device.id, device);
    const room = device.room ?? "No room";
    if (!rooms.has(room)) rooms.set(room, []);
    rooms.get(room).push(device);
  }
  content.replaceChildren();
  if (!data.devices.length) content.append(el("p", {}, "No devices yet: commission one on the Devices page."));
  for (const [room, list] of [...rooms].sort()) {
    const rid = `room-${room.replace(/\W+/g, "-")}`;
    content.append(el("section", { class: "room", "aria-labelledby": rid },
      el("h2", { id: rid }, room), el("div", { class: "grid" }, list.map(deviceCard))));
  }
  markRuleDevices();
  events("device.,registry.", (event) => {
    if (event.type === "device.state") {
      const device = devices.get(event.data.device_id);
      if (!device) return;
      device.attrs[event.data.path] = event.data.value;
      refreshCard(device);
      reread(device);
    } else if (event.type === "device.availability") {
      const device = devices.get(event.data.device_id);
      if (device) { device.available = Boolean(event.data.available); refreshCard(device); }
    }
  });
}

// ---- approvals -----------------------------------------------------------------------

let approvalTimer = null;

function timeLeft(expires) {
  const s = Math.max(0, Math.round(expires - Date.now() / 1000));
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s left` : `${s} s left`;
}

async function decide(id, decision) {
  try {
    await api("POST", `/v1/approvals/${encodeURIComponent(id)}`, { decision });
    status(decision === "approve" ? "Approved" : "Denied", "ok");
  } catch (err) { status(`Not recorded: ${err.message}`, "error"); }
  await approvals(false);
}

// Every pending approval, page by page (oldest last): none is pushed out of sight.
async function allPending() {
  const out = [];
  let offset = 0;
  for (let page = 0; page < 100; page += 1) {
    const got = await api("GET", `/v1/approvals?status=pending&limit=100&offset=${offset}`);
    out.push(...got.approvals);
    if (got.next_offset == null) break;
    offset = got.next_offset;
  }
  return out;
}

async function approvals(subscribe = true) {
  const [waiting, all] = await Promise.all([allPending(), api("GET", "/v1/approvals")]);
  const pending = { approvals: waiting };
  const pendingList = el("ul", { class: "approvals", id: "pending" });
  for (const a of pending.approvals) {
    pendingList.append(el("li", { class: "card approval", "data-approval": a.id },
      el("h3", {}, a.message || a.tool),
      el("p", {}, el("strong", {}, a.agent_id ?? "unknown agent"), " asks to run ", el("code", {}, a.tool)),
      el("p", { class: "params" }, "Parameters: ", el("code", {}, redact(a.params))),
      el("p", {}, `${a.approvals} of ${a.required} approvals · `, el("span", { class: "left", "data-expires": a.expires_at }, timeLeft(a.expires_at))),
      el("div", { class: "controls" },
        el("button", { type: "button", class: "approve", "aria-label": `Approve ${a.tool}`, onclick: () => decide(a.id, "approve") }, "Approve"),
        el("button", { type: "button", class: "deny", "aria-label": `Deny ${a.tool}`, onclick: () => decide(a.id, "deny") }, "Deny"))));
  }
  if (!pending.approvals.length) pendingList.append(el("li", {}, "Nothing is waiting for you."));
  const rows = all.approvals.filter((a) => a.status !== "pending").map((a) => el("tr", { "data-approval": a.id },
    el("td", {}, new Date(a.created_at * 1000).toLocaleString()), el("td", {}, a.agent_id ?? ""),
    el("td", {}, el("code", {}, a.tool)), el("td", { class: "status" }, a.status),
    el("td", {}, a.votes.map((v) => `${v.approver}: ${v.decision}`).join(", "))));
  content.replaceChildren(
    el("h2", {}, "Waiting"), pendingList,
    el("h2", {}, "History"),
    el("table", { id: "history" }, el("thead", {}, el("tr", {}, ["When", "Agent", "Tool", "Outcome", "Votes"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows)));
  clearInterval(approvalTimer);
  approvalTimer = setInterval(() => {
    for (const span of document.querySelectorAll(".left")) span.textContent = timeLeft(Number(span.dataset.expires));
  }, 1000);
  if (subscribe) events("approval.", () => approvals(false));
}

// ---- rules ---------------------------------------------------------------------------

async function setRule(id, enabled) {
  try {
    await api("PATCH", `/v1/automations/${encodeURIComponent(id)}`, { enabled });
    status(enabled ? "Rule enabled" : "Rule disabled", "ok");
  } catch (err) { status(`Not changed: ${err.message}`, "error"); }
  await rules(false);
}

// Why a run did (not) act, in words: from its audit record.
function runWords(run) {
  const actions = run.details?.actions ?? [];
  if (run.decision === "allowed") {
    const failed = actions.filter((a) => a.ok === false).map((a) => a.error ?? a.type);
    return failed.length ? `tried, failed: ${failed.join(", ")}` : "acted";
  }
  if (run.decision === "conditions_not_met") {
    return `did not act: ${actions[0]?.condition?.why ?? "a condition did not hold"}`;
  }
  return `did not act: ${run.decision.replaceAll("_", " ")}`;
}

function triggerWords(t) {
  if (t.type === "device_event") return `device ${t.device_id} reports ${t.event}`;
  if (t.type === "state") return `device ${t.device_id} ${t.path} changes`;
  if (t.type === "time") return `${t.at} (${t.timezone ?? "the home's time"})`;
  if (t.type === "sun") return `${t.event} ${t.offset_min ? `${t.offset_min} min` : ""}`;
  if (t.type === "presence") {
    if (t.person) return `${t.person} ${t.home ? "arrives" : "leaves"}`;
    return t.home ? "the first person arrives" : "the last person leaves";
  }
  return `${t.tool} ${t.status ?? "completed"}`;
}

async function rules(subscribe = true) {
  const listed = await api("GET", "/v1/automations");
  const shown = await Promise.all(listed.rules.map((r) => api("GET", `/v1/automations/${encodeURIComponent(r.id)}`)));
  const items = shown.map((r) => el("li", { class: "card rule", "data-rule": r.id },
    el("h3", {}, r.name),
    el("p", {}, "When ", triggerWords(r.trigger), " · by ", el("strong", {}, r.creator)),
    el("p", { class: "state" }, r.enabled || r.status === "revoked" ? r.status.replaceAll("_", " ") : "disabled", r.reason ? ` — ${r.reason}` : ""),
    el("p", { class: "devices" }, "Devices: ", r.devices.length ? r.devices.join(", ") : "none"),
    // A revoked rule cannot be enabled again (its creator's authority is gone).
    el("div", { class: "controls" }, r.status === "revoked" ? "" :
      el("button", { type: "button", class: "toggle", "aria-label": `${r.enabled ? "Disable" : "Enable"} rule ${r.name}`, onclick: () => setRule(r.id, !r.enabled) }, r.enabled ? "Disable" : "Enable")),
    el("h4", {}, "Last runs"),
    el("ol", { class: "runs" }, r.runs.length ? r.runs.slice(0, 5).map((run) => el("li", { "data-decision": run.decision },
      `${new Date(run.ts * 1000).toLocaleString()}: ${runWords(run)}`)) : el("li", {}, "Not run yet."))));
  content.replaceChildren(
    el("ul", { class: "rules", id: "rules" }, items.length ? items : el("li", {}, "No rules yet.")),
    ...await bindingsSection());
  if (subscribe) events("automation.", () => rules(false));
}

// Matter bindings beside the rules: a switch that sends On/Off to a light by itself (no
// bridge in the path). Absent without Matter (the route answers an error then).
async function bindingsSection() {
  let listed;
  try { listed = await api("GET", "/v1/automations/bindings"); } catch { return []; }
  const names = {};
  try { for (const d of (await api("GET", "/v1/devices")).devices) names[d.id] = d.name; } catch { /* ids only */ }
  const named = (id) => names[id] ? `${names[id]} (${id})` : id;
  const items = listed.bindings.map((b) => el("li", { class: "card binding", "data-binding": `${b.switch}>${b.light}` },
    el("p", {}, el("strong", {}, named(b.switch)), " switches ", el("strong", {}, named(b.light)), " directly"),
    el("p", { class: "state" }, b.status.replaceAll("_", " ")),
    b.status === "active" ? el("div", { class: "controls" },
      el("button", { type: "button", class: "unbind", "aria-label": `Unbind ${named(b.switch)} from ${named(b.light)}`,
        onclick: () => unbind(b.switch, b.light) }, "Unbind")) : ""));
  return [el("h2", {}, "Matter bindings"),
    el("p", { class: "hint" }, "A bound switch operates its light itself, even while the bridge is down."),
    el("ul", { class: "rules", id: "bindings" }, items.length ? items : el("li", {}, "No bindings."))];
}

async function unbind(sw, light) {
  try {
    await api("DELETE", `/v1/automations/bindings/${encodeURIComponent(sw)}/${encodeURIComponent(light)}`);
    status("Binding removed", "ok");
  } catch (err) { status(`Not removed: ${err.message}`, "error"); }
  await rules(false);
}

// ---- devices -------------------------------------------------------------------------

// Verhoeff check digit of Matter manual pairing codes.
const V_D = [[0,1,2,3,4,5,6,7,8,9],[1,2,3,4,0,6,7,8,9,5],[2,3,4,0,1,7,8,9,5,6],[3,4,0,1,2,8,9,5,6,7],[4,0,1,2,3,9,5,6,7,8],[5,9,8,7,6,0,4,3,2,1],[6,5,9,8,7,1,0,4,3,2],[7,6,5,9,8,2,1,0,4,3],[8,7,6,5,9,3,2,1,0,4],[9,8,7,6,5,4,3,2,1,0]];
const V_P = [[0,1,2,3,4,5,6,7,8,9],[1,5,7,6,2,8,3,0,9,4],[5,8,0,3,7,9,6,1,4,2],[8,9,1,6,0,4,3,5,2,7],[9,4,5,3,1,2,6,8,7,0],[4,2,8,6,5,7,3,9,0,1],[2,7,9,3,8,0,6,4,1,5],[7,0,4,6,9,1,3,2,5,8]];
function verhoeffValid(digits) {
  let c = 0;
  [...digits].reverse().forEach((d, i) => { c = V_D[c][V_P[i % 8][Number(d)]]; });
  return c === 0;
}

export function checkCode(text) {
  const code = text.trim();
  if (!code) return { ok: false, message: "Enter the code from the device or its box." };
  if (/^MT:/i.test(code)) {
    const body = code.slice(3);
    if (!/^[0-9A-Z.-]+$/.test(body)) return { ok: false, message: "A QR code text has only 0-9, A-Z, '-' and '.' after MT:" };
    if (body.length < 19) return { ok: false, message: "This QR code text is too short." };
    return { ok: true, message: "QR code text looks right." };
  }
  const digits = code.replace(/[\s-]/g, "");
  if (!/^\d+$/.test(digits)) return { ok: false, message: "A manual code has only digits (dashes and spaces are fine)." };
  if (digits.length !== 11 && digits.length !== 21) return { ok: false, message: `A manual code has 11 or 21 digits; this has ${digits.length}.` };
  if (!verhoeffValid(digits)) return { ok: false, message: "The check digit does not match: a digit is mistyped." };
  return { ok: true, message: "Code is valid." };
}

const STAGES = ["discovering", "pase", "attestation", "operational", "interview", "tools_ready"];

async function devicesPage() {
  const codeInput = el("input", { id: "code", name: "code", autocomplete: "off", spellcheck: "false",
    "aria-describedby": "code-check", placeholder: "3497-011-2332 or MT:…" });
  const check = el("p", { id: "code-check", "aria-live": "polite" }, "");
  const name = el("input", { id: "new-name", name: "name", autocomplete: "off" });
  const room = el("input", { id: "new-room", name: "room", autocomplete: "off" });
  const stages = el("ol", { id: "stages", class: "stages", "aria-live": "polite" });
  const submit = el("button", { type: "submit", disabled: true }, "Commission");
  codeInput.addEventListener("input", () => {
    const res = checkCode(codeInput.value);
    check.textContent = res.message;
    check.className = res.ok ? "ok" : "error";
    codeInput.setAttribute("aria-invalid", res.ok ? "false" : "true");
    submit.disabled = !res.ok;
  });
  let current = null;
  let onProgress = () => {};
  let live = Promise.resolve();
  const form = el("form", { class: "card", id: "commission", onsubmit: async (e) => {
    e.preventDefault();
    stages.replaceChildren();
    const body = { code: codeInput.value.trim() };
    if (name.value.trim()) body.name = name.value.trim();
    if (room.value.trim()) body.room = room.value.trim();
    try {
      await live;
      const res = await api("POST", "/v1/devices/commission?wait=false", body);
      status("Commissioning started");
      onProgress(res.commission_id);
    } catch (err) { status(`Cannot commission: ${err.message}`, "error"); }
  } },
  el("h2", {}, "Add a device"),
  el("label", { for: "code" }, "Pairing code"), codeInput, check,
  el("label", { for: "new-name" }, "Name (optional)"), name,
  el("label", { for: "new-room" }, "Room (optional)"), room, submit, stages);
  const deviceList = el("div", { id: "device-list" });
  content.replaceChildren(form, el("h2", {}, "Devices"), deviceList);
  await renderDeviceList(deviceList);
  // Stages can arrive before the answer naming the commission: keep them by id.
  const progress = new Map();
  const show = () => {
    const list = progress.get(current) ?? [];
    stages.replaceChildren(...list.map((data) => {
      const stage = data.stage;
      const text = stage === "failed" ? `failed: ${data.error?.message ?? "unknown error"}` : stage;
      return el("li", { "data-stage": stage, class: stage === "failed" ? "error" : "ok" }, `${text} (${(data.elapsed_ms / 1000).toFixed(1)} s)`);
    }));
    if (list.some((d) => d.stage === "tools_ready")) { status("Device ready", "ok"); renderDeviceList(deviceList); }
    if (list.some((d) => d.stage === "failed")) status("Commissioning failed", "error");
  };
  onProgress = (id) => { current = id; show(); };
  live = events("commissioning.,registry.", (event) => {
    if (event.type !== "commissioning.progress") return;
    const id = event.data.commission_id;
    if (!progress.has(id)) progress.set(id, []);
    progress.get(id).push(event.data);
    if (id === current) show();
  });
}

async function renderDeviceList(list) {
  const data = await api("GET", "/v1/devices");
  list.replaceChildren(...data.devices.map((d) => {
    const id = `edit-${d.id}`;
    const nameIn = el("input", { id: `${id}-name`, value: d.name });
    const roomIn = el("input", { id: `${id}-room`, value: d.room ?? "" });
    const aliasIn = el("input", { id: `${id}-aliases`, value: d.aliases.join(", ") });
    return el("form", { class: "card device-edit", "data-device": d.id, onsubmit: async (e) => {
      e.preventDefault();
      try {
        await api("PATCH", `/v1/devices/${encodeURIComponent(d.id)}`, {
          name: nameIn.value.trim(), room: roomIn.value.trim() || null,
          aliases: aliasIn.value.split(",").map((s) => s.trim()).filter(Boolean),
        });
        status(`Saved ${nameIn.value}`, "ok");
        renderDeviceList(list);
      } catch (err) { status(`Not saved: ${err.message}`, "error"); }
    } },
    el("h3", {}, d.name, " ", el("small", {}, d.available ? "available" : "unavailable")),
    el("label", { for: `${id}-name` }, "Name"), nameIn,
    el("label", { for: `${id}-room` }, "Room"), roomIn,
    el("label", { for: `${id}-aliases` }, "Aliases (comma-separated)"), aliasIn,
    el("div", { class: "controls" },
      el("button", { type: "submit" }, "Save"),
      el("button", { type: "button", class: "share", "aria-label": `Share ${d.name} with another app`, onclick: (e) => share(d, e.target.closest("form")) }, "Share"),
      el("button", { type: "button", class: "deny", "aria-label": `Remove ${d.name}`, onclick: async () => {
        if (!confirm(`Remove ${d.name} from this bridge?`)) return;
        try { await api("DELETE", `/v1/devices/${encodeURIComponent(d.id)}`); status(`Removed ${d.name}`, "ok"); renderDeviceList(list); }
        catch (err) { status(`Not removed: ${err.message}`, "error"); }
      } }, "Remove")));
  }));
}

async function share(device, form) {
  status(`Opening a pairing window on ${device.name}…`);
  try {
    const res = await api("POST", `/v1/devices/${encodeURIComponent(device.id)}/share`, {});
    form.querySelector(".shared")?.remove();
    form.append(el("div", { class: "shared", role: "group", "aria-label": `Pairing code for ${device.name}` },
      el("p", {}, `Add ${device.name} in another Matter app within ${Math.round(res.window_s / 60)} minutes with:`),
      el("p", {}, "Manual code: ", el("strong", { class: "manual-code" }, res.manual_code)),
      el("img", { class: "qr", src: `/console/api/qr?text=${encodeURIComponent(res.qr_code)}`, alt: `QR code ${res.qr_code}`, width: 180, height: 180 }),
      el("p", {}, el("code", { class: "qr-text" }, res.qr_code))));
    status(`Pairing window open on ${device.name}`, "ok");
  } catch (err) { status(`Cannot share: ${err.message}`, "error"); }
}

// ---- rooms and floors ----------------------------------------------------------------

// The floors (highest first) with their rooms, as /v1/floors shows them to the session;
// a room moves to another floor (or to none) with its select and "Move".
async function roomsPage() {
  const data = await api("GET", "/v1/floors");
  const floors = [...data.floors].sort((a, b) => b.level - a.level);
  const roomItem = (room, current) => {
    const id = `floor-of-${room.slug}`;
    const select = el("select", { id, name: "floor", "data-room": room.slug },
      el("option", { value: "" }, "No floor"),
      floors.map((f) => el("option", { value: f.slug, selected: f.slug === current }, f.floor)));
    return el("li", { class: "card room-floor", "data-room": room.slug },
      el("h3", {}, room.room),
      el("label", { for: id }, `Floor of ${room.room}`), select,
      el("button", { type: "button", class: "move", "aria-label": `Move ${room.room}`, onclick: async () => {
        try {
          const moved = await api("PATCH", `/v1/rooms/${encodeURIComponent(room.slug)}`, { floor: select.value || null });
          status(moved.floor ? `Moved ${moved.room} to ${moved.floor}` : `${moved.room} is on no floor now`, "ok");
          await roomsPage();
        } catch (err) { status(`Not moved: ${err.message}`, "error"); }
      } }, "Move"));
  };
  const sections = floors.map((f) => {
    const fid = `floor-${f.slug}`;
    return el("section", { class: "floor", "data-floor": f.slug, "aria-labelledby": fid },
      el("h2", { id: fid }, f.floor, " ", el("small", {}, `level ${f.level}`)),
      f.aliases.length ? el("p", { class: "aliases" }, `Also called ${f.aliases.join(", ")}`) : null,
      el("ul", { class: "rooms" }, f.rooms.map((r) => roomItem(r, f.slug))),
      f.rooms.length ? null : el("p", {}, "No rooms on this floor yet."),
      el("button", { type: "button", class: "deny", "aria-label": `Delete the floor ${f.floor}`, onclick: async () => {
        if (!confirm(`Delete the floor ${f.floor}? Its rooms stay, on no floor.`)) return;
        try { await api("DELETE", `/v1/floors/${encodeURIComponent(f.slug)}`); status(`Deleted ${f.floor}`, "ok"); await roomsPage(); }
        catch (err) { status(`Not deleted: ${err.message}`, "error"); }
      } }, "Delete floor"));
  });
  const loose = data.rooms_without_floor.length ? el("section", { class: "floor", "data-floor": "", "aria-labelledby": "floor-none" },
    el("h2", { id: "floor-none" }, "On no floor"),
    el("ul", { class: "rooms" }, data.rooms_without_floor.map((r) => roomItem(r, "")))) : null;
  const name = el("input", { id: "fl-name", name: "name", required: true, maxlength: 64, autocomplete: "off", placeholder: "First Floor" });
  const level = el("input", { id: "fl-level", name: "level", type: "number", min: -5, max: 50, step: 1, value: 0 });
  const aliases = el("input", { id: "fl-aliases", name: "aliases", autocomplete: "off", placeholder: "upstairs, erster Stock" });
  const form = el("form", { class: "card", id: "add-floor", onsubmit: async (e) => {
    e.preventDefault();
    try {
      const made = await api("POST", "/v1/floors", {
        name: name.value.trim(), level: Number(level.value || 0),
        aliases: aliases.value.split(",").map((a) => a.trim()).filter(Boolean),
      });
      status(`Added ${made.floor}`, "ok");
      await roomsPage();
    } catch (err) { status(`Not added: ${err.message}`, "error"); }
  } },
    el("h2", {}, "Add a floor"),
    el("label", { for: "fl-name" }, "Name"), name,
    el("label", { for: "fl-level" }, "Level (0 the ground floor, 1 above, -1 a basement)"), level,
    el("label", { for: "fl-aliases" }, "Other words for it (comma-separated)"), aliases,
    el("div", { class: "controls" }, el("button", { type: "submit", id: "fl-add" }, "Add floor")));
  content.replaceChildren(...sections, ...(loose ? [loose] : []),
    ...(floors.length || loose ? [] : [el("p", {}, "No rooms yet: put devices in rooms on the Devices page.")]), form);
}

// ---- agents and tokens -------------------------------------------------------------

const PRESETS = {
  voice: { label: "Voice assistant: switch and read devices", permissions: ["device:control:*", "device:read:*"] },
  reader: { label: "Read-only agent: read devices", permissions: ["device:read:*"] },
  admin: { label: "Administrator: everything", permissions: ["*"] },
};
const TTLS = [["1 day", 86400], ["1 week", 604800], ["30 days", 2592000], ["1 year", 31536000]];

async function tokens() {
  let listing;
  try { listing = await api("GET", "/v1/tokens?limit=200"); } catch (err) {
    if (err.code === "PERMISSION_DENIED") {
      content.replaceChildren(el("p", { class: "error", role: "alert", id: "tokens-denied" },
        "Your session may not manage tokens (it needs token:manage)."));
      return;
    }
    throw err;
  }
  const agent = el("input", { id: "t-agent", name: "agent", required: true, maxlength: 128, autocomplete: "off", placeholder: "kitchen-speaker" });
  const preset = el("select", { id: "t-preset", name: "preset" },
    Object.entries(PRESETS).map(([key, p]) => el("option", { value: key }, p.label)));
  const ttl = el("select", { id: "t-ttl", name: "ttl" }, TTLS.map(([label, s]) => el("option", { value: s }, label)));
  const shown = el("div", { id: "issued", "aria-live": "polite" });
  const form = el("form", { class: "card", id: "issue-token" },
    el("h2", {}, "Issue a token"),
    el("label", { for: "t-agent" }, "Agent name"), agent,
    el("label", { for: "t-preset" }, "What it may do"), preset,
    el("label", { for: "t-ttl" }, "Valid for"), ttl,
    el("div", { class: "controls" }, el("button", { type: "submit", id: "t-issue" }, "Issue token")));
  const table = el("table", { id: "tokens" });
  const draw = (entries) => table.replaceChildren(
    el("thead", {}, el("tr", {}, ["Agent", "Permissions", "Issued", "Expires", "State", ""].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, entries.map((t) => el("tr", { "data-token": t.id },
      el("td", {}, t.agent_id), el("td", {}, el("code", {}, (t.permissions ?? []).join(" "))),
      el("td", {}, new Date(t.issued_at * 1000).toLocaleString()),
      el("td", {}, new Date(t.expires_at * 1000).toLocaleString()),
      el("td", { class: "state" }, t.revoked ? "revoked" : (t.expires_at * 1000 < Date.now() ? "expired" : "valid")),
      el("td", {}, t.revoked ? "" : el("button", { type: "button", class: "revoke", "aria-label": `Revoke the token of ${t.agent_id}`,
        onclick: async () => {
          if (!confirm(`Revoke the token of ${t.agent_id}? It stops working at once.`)) return;
          try { await api("DELETE", `/v1/tokens/${encodeURIComponent(t.id)}`); status(`Revoked the token of ${t.agent_id}`, "ok"); await reload(); }
          catch (err) { status(`Cannot revoke: ${err.message}`, "error"); }
        } }, "Revoke"))))));
  const reload = async () => draw((await api("GET", "/v1/tokens?limit=200")).tokens);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const chosen = PRESETS[preset.value];
    try {
      const res = await api("POST", "/v1/tokens", { agent_id: agent.value.trim(), permissions: chosen.permissions, ttl_s: Number(ttl.value) });
      const qr = await fetch("/console/api/qr", { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf }, body: JSON.stringify({ text: res.token }) });
      const svg = qr.ok ? await qr.text() : null;
      const copy = el("button", { type: "button", id: "t-copy", onclick: async () => {
        try { await navigator.clipboard.writeText(res.token); status("Token copied", "ok"); } catch { status("Select the token and copy it", "info"); }
      } }, "Copy token");
      shown.replaceChildren(el("div", { class: "card once", role: "group", "aria-label": `New token for ${res.agent_id}` },
        el("p", {}, el("strong", {}, "Shown once: "), `copy it now into ${res.agent_id}; the bridge keeps only its fingerprint.`),
        el("textarea", { id: "t-token", readonly: true, rows: 4, "aria-label": "The new token" }, res.token),
        copy,
        svg ? el("img", { class: "qr", id: "t-qr", alt: "QR code of the new token", width: 240, height: 240,
          src: `data:image/svg+xml;base64,${btoa(svg)}` }) : el("p", {}, "Too long for a QR code: copy it.")));
      status(`Issued a token for ${res.agent_id}`, "ok");
      form.reset();
      await reload();
    } catch (err) { status(`Cannot issue: ${err.message}`, "error"); }
  });
  content.replaceChildren(form, shown, el("h2", {}, "Tokens issued here"), table);
  draw(listing.tokens);
}

// ---- mesh and health -----------------------------------------------------------------

async function mesh() {
  const data = await api("GET", "/v1/mesh/peers");
  let trust = null;
  try { trust = await api("GET", "/v1/mesh/trust"); } catch { trust = null; }
  const me = data.self ?? {};
  const peers = data.peers ?? [];
  const sources = new Map((trust?.entries ?? []).map((e) => [e.entry, e.source]));
  const sourceOf = (p) => sources.get(p.node_id) ?? sources.get(p.fingerprint ?? "");
  const keyOf = (p) => (sources.has(p.fingerprint ?? "") ? p.fingerprint : p.node_id);
  const change = async (method, p, verb) => {
    try {
      await api(method, `/v1/mesh/trust/${encodeURIComponent(keyOf(p))}`);
      status(`${verb} ${p.name ?? p.node_id}`, "ok");
      setTimeout(() => mesh().catch((err) => status(err.message, "error")), 800);
    } catch (err) { status(`Cannot change trust: ${err.message}`, "error"); }
  };
  const action = (p) => {
    if (!trust) return "—";
    const source = sourceOf(p);
    if (source === "config") return el("span", { class: "muted" }, "trusted by configuration");
    if (source === "added") return el("button", { type: "button", class: "untrust", "aria-label": `Stop trusting ${p.name ?? p.node_id}`, onclick: () => change("DELETE", p, "No longer trusting") }, "Untrust");
    return el("button", { type: "button", class: "trust", "aria-label": `Trust ${p.name ?? p.node_id}`, onclick: () => {
      if (confirm(`Trust ${p.name ?? p.node_id} (fingerprint ${p.fingerprint ?? "?"})? Calls may then run there on your agents' behalf.`)) change("PUT", p, "Trusting");
    } }, "Trust");
  };
  content.replaceChildren(
    el("dl", { class: "card", id: "node" },
      el("dt", {}, "This node"), el("dd", {}, el("code", { id: "node-id" }, me.node_id ?? "—"), me.name ? ` (${me.name})` : ""),
      el("dt", {}, "Key fingerprint"), el("dd", {}, el("code", {}, me.fingerprint ?? "—")),
      el("dt", {}, "Trust"), el("dd", {}, me.trust === "allowlist" ? "only nodes listed here or in mesh.trusted_nodes" : (me.trust ?? "—"))),
    el("h2", {}, "Peers"),
    el("table", { id: "peers" }, el("thead", {}, el("tr", {}, ["Peer", "Fingerprint", "Addresses", "Trusted", "Offers", "Trust"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, peers.map((p) => el("tr", { "data-node": p.node_id },
        el("td", {}, p.name ?? "", " ", el("code", {}, p.node_id)), el("td", {}, el("code", {}, p.fingerprint ?? "")),
        el("td", {}, (p.urls ?? []).join(" ")), el("td", { class: "trusted" }, p.trusted ? "yes" : "no"),
        el("td", {}, p.announcement ? `${p.announcement.tools} tools, ${p.announcement.devices} devices` : "—"),
        el("td", {}, action(p)))))),
    peers.length ? "" : el("p", {}, "No peers seen yet."),
    trust ? "" : el("p", {}, "Your session may not change trust (it needs mesh:manage)."));
}

async function health() {
  let data;
  try { data = await api("GET", "/console/api/health"); } catch (err) {
    if (err.code === "PERMISSION_DENIED") {
      content.replaceChildren(el("p", { class: "error", role: "alert" }, "Your session may not see health checks (it needs admin:health)."));
      return;
    }
    throw err;
  }
  const checks = data.doctor?.checks ?? [];
  const mark = { ok: "✓ ok", warn: "! warn", fail: "✗ fail" };
  content.replaceChildren(
    el("p", { id: "overall", class: `status-${data.doctor?.status}` }, `Overall: ${mark[data.doctor?.status] ?? data.doctor?.status}`),
    el("h2", {}, "Checks"),
    el("table", { id: "checks" }, el("thead", {}, el("tr", {}, ["Check", "Status", "Found", "How to fix"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, checks.map((c) => el("tr", { "data-check": c.name, class: `status-${c.status}` },
        el("td", {}, c.title), el("td", { class: "check-status" }, mark[c.status] ?? c.status), el("td", {}, c.found), el("td", {}, c.fix ?? ""))))),
    el("h2", {}, "Versions"),
    el("dl", { id: "versions", class: "card" }, Object.entries(data.versions ?? {}).flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-version": k }, v ?? "—")])),
    el("h2", {}, "Controller"),
    el("dl", { id: "controller", class: "card" },
      el("dt", {}, "Connected"), el("dd", {}, data.controller?.connected ? "yes" : "no"),
      el("dt", {}, "Managed here"), el("dd", {}, data.controller?.managed ? "yes" : "no"),
      el("dt", {}, "Address"), el("dd", {}, el("code", {}, data.controller?.url ?? "—")),
      el("dt", {}, "Thread credentials"), el("dd", {}, data.controller?.server_info?.thread_credentials_set ? "set" : "not set")),
    el("h2", {}, "Bridge"), el("pre", { id: "healthz" }, JSON.stringify(data.bridge, null, 2)));
}

// ---- audit ---------------------------------------------------------------------------

async function audit() {
  const field = (id, label, attrs = {}) => [el("label", { for: id }, label), el("input", { id, name: id, autocomplete: "off", ...attrs })];
  const decision = el("select", { id: "f-decision", name: "decision" },
    ["", "allowed", "denied", "unauthenticated", "confirmed", "rejected"].map((v) => el("option", { value: v }, v || "any")));
  const form = el("form", { class: "card", id: "audit-filter" },
    ...field("f-agent", "Agent"), ...field("f-tool", "Tool (full name)"),
    el("label", { for: "f-decision" }, "Decision"), decision,
    ...field("f-since", "Since", { type: "datetime-local" }),
    el("div", { class: "controls" }, el("button", { type: "submit" }, "Filter"), el("a", { id: "csv", class: "button", href: "#" }, "Download CSV")));
  const table = el("table", { id: "audit" });
  const pager = el("div", { class: "controls" });
  content.replaceChildren(form, table, pager);
  let pageNo = 0;
  const params = () => {
    const q = new URLSearchParams();
    for (const [key, id] of [["agent", "f-agent"], ["tool", "f-tool"]]) {
      const v = document.getElementById(id).value.trim();
      if (v) q.set(key, v);
    }
    if (decision.value) q.set("decision", decision.value);
    const since = document.getElementById("f-since").value;
    if (since) q.set("since", String(Math.floor(new Date(since).getTime() / 1000)));
    return q;
  };
  const load = async () => {
    const q = params();
    document.getElementById("csv").href = `/console/api/audit?${q}&format=csv`;
    q.set("page", String(pageNo));
    const data = await api("GET", `/console/api/audit?${q}`);
    table.replaceChildren(
      el("thead", {}, el("tr", {}, ["When", "Agent", "Tool", "Decision", "Outcome", "Error"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, data.entries.map((e) => el("tr", {},
        el("td", {}, new Date(e.ts * 1000).toLocaleString()), el("td", {}, e.agent_id ?? ""), el("td", {}, el("code", {}, e.tool ?? "")),
        el("td", { class: "decision" }, e.decision), el("td", {}, e.outcome ?? ""), el("td", {}, e.error_code ?? "")))));
    pager.replaceChildren(
      el("button", { type: "button", id: "prev", disabled: pageNo === 0, onclick: () => { pageNo -= 1; load(); } }, "Newer"),
      el("span", {}, `Page ${pageNo + 1}`),
      el("button", { type: "button", id: "next", disabled: !data.more, onclick: () => { pageNo += 1; load(); } }, "Older"));
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); pageNo = 0; load().catch((err) => status(err.message, "error")); });
  await load();
}

const PAGES = { home, approvals, rules, devices: devicesPage, rooms: roomsPage, tokens, mesh, audit, health };

if (content && PAGES[pageName]) {
  PAGES[pageName]().catch((err) => {
    content.replaceChildren(el("p", { class: "error", role: "alert" }, `Cannot load this page: ${err.message}`));
  });
}
