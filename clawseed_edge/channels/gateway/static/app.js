// ClawSeed phone app: plain JS, no build step, no third-party code.
// Talks to the gateway it was served from: POST /pair, /ws/chat, /sse, /api/*.
"use strict";

const TOKEN_KEY = "clawseed.token";
const SESSION_KEY = "clawseed.session";
const LAST_KEY = "clawseed.last"; // the last known devices and boards, shown greyed when offline
const RANGE_KEY = "clawseed.range";
// The charts' ranges: the history route's window, and what the picker and the chart call it.
const RANGES = {
  "1h": { seconds: 3600, name: "last hour" },
  "24h": { seconds: 86400, name: "last day" },
  "7d": { seconds: 7 * 86400, name: "last week" },
};
const HISTORY_POINTS = 120; // asked of the history route per quantity (a chart is ~300 px wide)
const SERIES_MAX = 600; // points one chart keeps (stored + live)
const OUTPUT_SWITCH = new Set(["led", "relay", "digital_out", "buzzer"]);
const OUTPUT_LEVEL = new Set(["pwm_led", "servo"]);
const $ = (id) => document.getElementById(id);

const state = {
  token: localStorage.getItem(TOKEN_KEY),
  sessionId: localStorage.getItem(SESSION_KEY),
  screen: "chat",
  ws: null,
  wsRetry: 0,
  wsTimer: null,
  sse: null,
  sseRetry: 0,
  sseTimer: null,
  online: { ws: false, sse: false },
  turn: null, // the assistant message being streamed
  busy: false,
  sentOnce: false,
  devices: new Map(),
  sensors: new Map(), // name -> {reading, error, series: {quantity: [[t, v]]}, units, note}
  range: RANGES[localStorage.getItem(RANGE_KEY)] ? localStorage.getItem(RANGE_KEY) : "1h",
  approvals: [], // waiting requests, oldest first
  shownApproval: null,
  modelDown: false,
};

// --- small helpers ------------------------------------------------------------------------

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function pretty(value) {
  if (typeof value === "string") return value;
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

function clip(value, limit) {
  const text = String(value ?? "");
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

function showBanner(text, kind = "warn") {
  const banner = $("banner");
  banner.textContent = text;
  banner.dataset.kind = kind;
  banner.hidden = !text;
}

class TokenRejected extends Error {}

async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${state.token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new Error("The device cannot be reached");
  }
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (response.status === 401) { tokenRejected(); throw new TokenRejected("token rejected"); }
  if (!response.ok) {
    const message = (data && data.error && data.error.message) || `HTTP ${response.status}`;
    const error = new Error(message);
    error.code = data && data.error && data.error.code;
    throw error;
  }
  return data;
}

// --- screens ------------------------------------------------------------------------------

function show(screen) {
  if (screen !== "pair") state.screen = screen;
  const paired = Boolean(state.token);
  $("tabs").hidden = !paired;
  $("estop").hidden = !paired; // it needs a token: unpaired it could do nothing
  for (const section of document.querySelectorAll(".screen")) {
    section.hidden = section.id !== `screen-${paired ? screen : "pair"}`;
  }
  for (const button of $("tabs").querySelectorAll("button")) {
    const current = button.dataset.screen === screen;
    if (current) button.setAttribute("aria-current", "page");
    else button.removeAttribute("aria-current");
  }
  if (paired && screen === "sessions") loadSessions();
  if (paired && screen === "settings") loadPersonality();
}

function tokenRejected() {
  if (!state.token) return;
  state.token = null;
  localStorage.removeItem(TOKEN_KEY);
  disconnect();
  $("pair-error").textContent =
    "This browser's token was rejected (revoked, or the device was reset). Pair again with a new code.";
  setLinkState("Not paired");
  show("pair");
  $("pair-code").focus();
}

function setLinkState(text) {
  $("link-state").textContent = text;
}

function updateLink() {
  const { ws, sse } = state.online;
  const offline = !ws && !sse;
  document.body.classList.toggle("offline", offline && Boolean(state.token));
  if (!state.token) return;
  if (ws && sse) setLinkState("Connected");
  else if (offline) {
    const wait = Math.max(backoff(state.wsRetry), backoff(state.sseRetry));
    setLinkState(`Offline, retrying in ${Math.round(wait / 1000)} s`);
    showBanner("The device cannot be reached. Retrying; the values shown are the last known.");
  } else setLinkState("Reconnecting…");
  if (!offline && $("banner").dataset.kind === "warn" && !state.modelDown) showBanner("");
}

function backoff(attempt) {
  return Math.min(15000, 500 * 2 ** Math.min(attempt, 5));
}

// --- pairing ------------------------------------------------------------------------------

async function pair(event) {
  event.preventDefault();
  const code = $("pair-code").value.trim();
  const error = $("pair-error");
  if (!/^[0-9]{6}$/.test(code)) {
    error.textContent = "The code is 6 digits.";
    $("pair-code").focus();
    return;
  }
  error.textContent = "Pairing…";
  const name = $("pair-name").value.trim() || "phone browser";
  try {
    const response = await fetch("/pair", { method: "POST", headers: { "X-Pairing-Code": code, "X-Client-Name": name } });
    const data = await response.json();
    if (!response.ok) { error.textContent = data.error ? data.error.message : `HTTP ${response.status}`; return; }
    state.token = data.token;
    localStorage.setItem(TOKEN_KEY, data.token);
    error.textContent = "";
    $("pair-code").value = "";
    start();
  } catch {
    error.textContent = "The device cannot be reached; check that you are on its network.";
  }
}

// --- chat (WebSocket) ---------------------------------------------------------------------

function wsUrl() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  // approvals=1: this app answers approval requests (a client that does not say so is never waited for).
  const params = new URLSearchParams({ token: state.token, approvals: "1" });
  if (state.sessionId) params.set("session_id", state.sessionId);
  return `${proto}//${location.host}/ws/chat?${params}`;
}

function connectWs() {
  clearTimeout(state.wsTimer);
  if (!state.token) return;
  const ws = new WebSocket(wsUrl());
  state.ws = ws;
  ws.onmessage = (event) => { try { onFrame(JSON.parse(event.data)); } catch (err) { console.error(err); } };
  ws.onopen = () => { state.wsRetry = 0; state.online.ws = true; updateLink(); };
  ws.onclose = (event) => {
    if (state.ws !== ws) return; // replaced on purpose
    state.online.ws = false;
    state.ws = null;
    setBusy(false);
    if (event.code === 1008 || !state.token) return; // token rejected: handled by the error frame
    state.wsTimer = setTimeout(connectWs, backoff(state.wsRetry++));
    updateLink();
  };
}

function send(frame) {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) {
    showBanner("Not connected to the device; your message was not sent. Retrying the connection.");
    return false;
  }
  state.ws.send(JSON.stringify(frame));
  return true;
}

function onFrame(frame) {
  switch (frame.type) {
    case "session_start":
      state.sessionId = frame.sessionId;
      localStorage.setItem(SESSION_KEY, frame.sessionId);
      $("chat-session").textContent = `${frame.name}${frame.resumed ? ` (resumed, ${frame.messageCount} messages)` : ""}`;
      if (frame.resumed) loadHistory(frame.sessionId);
      else $("messages").replaceChildren();
      break;
    case "connected": break;
    case "chunk": currentTurn().append(frame.content); break;
    case "chunk_reset": { // a regenerate starts: its answer replaces the last one
      const last = $("messages").lastElementChild;
      if (last && last.classList.contains("assistant")) last.remove();
      state.turn = null;
      currentTurn();
      break;
    }
    case "thinking": currentTurn().think(frame.content); break;
    case "tool_call": currentTurn().toolCall(frame); break;
    case "tool_result": currentTurn().toolResult(frame); break;
    case "approval_request": addApproval(frame); break;
    case "done": {
      const finished = currentTurn();
      finished.finish(frame.full_response);
      reveal(finished.item);
      state.turn = null;
      setBusy(false);
      if (state.modelDown) { state.modelDown = false; showBanner(""); }
      break;
    }
    case "aborted":
      currentTurn().note(`Stopped: ${frame.reason}`);
      state.turn = null;
      setBusy(false);
      break;
    case "error": onError(frame); break;
    default: break;
  }
}

function onError(frame) {
  if (frame.code === "unauthorized") { tokenRejected(); return; }
  if (String(frame.code).startsWith("provider_")) {
    state.modelDown = true;
    showBanner(`The model cannot be reached (${frame.message}). The devices and the STOP button still work.`, "model");
  }
  if (state.turn || state.busy) {
    currentTurn().note(`Error: ${frame.message}`, true);
    state.turn = null;
    setBusy(false);
  } else if (!String(frame.code).startsWith("provider_")) {
    showBanner(frame.message, "info");
  }
}

function setBusy(busy) {
  state.busy = busy;
  $("abort").disabled = !busy;
  $("send").disabled = busy;
  $("regenerate").disabled = busy || !state.sentOnce;
}

// The composer is sticky at the bottom: scrolling an answer "into view" would put its end
// under it. Scroll so the end is above the composer's top instead.
function reveal(item) {
  const composer = $("composer");
  const limit = composer && !composer.hidden ? composer.getBoundingClientRect().top - 8 : window.innerHeight;
  const overlap = item.getBoundingClientRect().bottom - limit;
  if (overlap > 0) window.scrollBy(0, overlap);
}

// The top bar and the screen tabs stay on screen: the tabs stick right below the bar.
function measureBar() {
  const bar = document.querySelector(".bar");
  if (bar) document.documentElement.style.setProperty("--bar-h", `${bar.offsetHeight}px`);
}
window.addEventListener("resize", measureBar);

function addMessage(role, text) {
  const item = el("li", { class: `msg ${role}` },
    el("span", { class: "visually-hidden", text: role === "user" ? "You said:" : "The device said:" }),
    el("div", { class: "text", text }));
  $("messages").append(item);
  reveal(item);
  return item;
}

function currentTurn() {
  if (state.turn) return state.turn;
  const item = el("li", { class: "msg assistant", "aria-busy": "true" },
    el("span", { class: "visually-hidden", text: "The device said:" }));
  const body = el("div", { class: "text" });
  const tools = new Map();
  let thinking = null;
  item.append(body);
  $("messages").append(item);
  const turn = {
    item,
    append(text) { body.textContent += text; reveal(item); },
    think(text) {
      if (!thinking) {
        thinking = el("details", { class: "thinking" }, el("summary", { text: "Thinking" }), el("pre"));
        item.insertBefore(thinking, body);
      }
      thinking.querySelector("pre").textContent += text;
    },
    toolCall(frame) {
      // A short summary on the card; the arguments and the raw result folded away.
      const result = el("pre", { class: "tool-result", text: "running…" });
      const summary = el("p", { class: "tool-summary", text: "Running…" });
      const card = el("article", { class: "tool-card", "aria-label": `Tool call ${frame.name}`, "data-tool": frame.name },
        el("h3", { class: "tool-name", text: frame.name }),
        summary,
        el("details", { class: "tool-details" },
          el("summary", { text: "Details" }),
          el("p", { class: "tool-label", text: "Arguments" }),
          el("pre", { class: "tool-args", text: pretty(frame.arguments) }),
          el("p", { class: "tool-label", text: "Result" }),
          result));
      tools.set(frame.id, { card, result, summary });
      item.insertBefore(card, body);
    },
    toolResult(frame) {
      let entry = tools.get(frame.id);
      if (!entry) { turn.toolCall({ id: frame.id, name: frame.name, arguments: {} }); entry = tools.get(frame.id); }
      entry.result.textContent = frame.success ? (frame.output || "(no output)") : `Failed: ${frame.error || frame.output}`;
      entry.summary.textContent = toolSummary(frame);
      entry.card.classList.add(frame.success ? "ok" : "failed");
      for (const picture of (frame.pictures || []).slice(0, 4)) item.insertBefore(turnPicture(picture), body);
    },
    finish(text) {
      if (!body.textContent && text) body.textContent = text;
      item.removeAttribute("aria-busy");
    },
    note(text, failed = false) {
      item.append(el("p", { class: failed ? "note error" : "note", text }));
      item.removeAttribute("aria-busy");
    },
  };
  state.turn = turn;
  return turn;
}

// One short line for a tool card: never the raw JSON of the answer.
function toolSummary(frame) {
  const clipLine = (text, n = 100) => {
    const line = String(text).split("\n").find((l) => l.trim()) || "";
    return line.length > n ? `${line.slice(0, n - 1)}…` : line;
  };
  if (!frame.success) return `Failed: ${clipLine(frame.error || frame.output || "no reason given")}`;
  const output = frame.output || "";
  let data = null;
  try { data = JSON.parse(output); } catch { data = null; }
  if (Array.isArray(data)) return `Done: ${data.length} item${data.length === 1 ? "" : "s"}`;
  if (data && typeof data === "object") {
    const parts = Object.entries(data).filter(([, v]) => v === null || typeof v !== "object").slice(0, 3)
      .map(([k, v]) => `${k} ${v}`);
    return parts.length ? `Done: ${clipLine(parts.join(", "))}` : "Done";
  }
  return output.trim() ? `Done: ${clipLine(output)}` : "Done";
}

function sendMessage(event) {
  event.preventDefault();
  const box = $("message");
  const text = box.value.trim();
  if (!text || state.busy) return;
  if (!send({ type: "message", content: text })) return;
  addMessage("user", text);
  box.value = "";
  state.turn = null;
  state.sentOnce = true;
  setBusy(true);
}

async function loadHistory(sessionId) {
  try {
    const data = await api("GET", `/api/sessions/${encodeURIComponent(sessionId)}`);
    if (state.sessionId !== sessionId) return;
    $("messages").replaceChildren();
    for (const message of data.messages) {
      if (message.role === "assistant" && message.tools && message.tools.length) {
        // The answer's tool cards, as they were drawn live.
        const turn = currentTurn();
        message.tools.forEach((tool, i) => {
          const frame = { id: `h${i}`, name: tool.name, arguments: tool.arguments || {} };
          turn.toolCall(frame);
          turn.toolResult({ ...frame, success: tool.success, output: tool.output, error: tool.error, pictures: tool.pictures });
        });
        turn.finish(message.content);
        state.turn = null;
      } else addMessage(message.role, message.content);
    }
    // Once the restored cards are laid out, the latest answer ends above the composer, as a
    // live one does (each item was revealed while the list below it was still growing).
    requestAnimationFrame(() => {
      const last = $("messages").lastElementChild;
      if (last) reveal(last);
    });
  } catch (err) {
    if (!(err instanceof TokenRejected)) showBanner(`Could not load the conversation: ${err.message}`, "info");
  }
}

// --- event stream (SSE over fetch, so the token goes in a header) -------------------------

async function connectSse() {
  clearTimeout(state.sseTimer);
  if (!state.token) return;
  const controller = new AbortController();
  state.sse = controller;
  try {
    const response = await fetch("/sse?hardware=1&approvals=1", { headers: { Authorization: `Bearer ${state.token}` }, signal: controller.signal, cache: "no-store" });
    if (response.status === 401) { tokenRejected(); return; }
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    state.sseRetry = 0;
    state.online.sse = true;
    updateLink();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
        if (data) { try { onEvent(JSON.parse(data)); } catch (err) { console.error(err); } }
      }
    }
  } catch (err) {
    if (controller.signal.aborted) return;
  }
  if (state.sse !== controller || !state.token) return;
  state.online.sse = false;
  state.sseTimer = setTimeout(connectSse, backoff(state.sseRetry++));
  updateLink();
}

function onEvent(frame) {
  switch (frame.type) {
    case "devices": if (frame.ok) renderDevices(frame.devices); else $("devices-note").textContent = frame.error; break;
    case "boards": renderBoards(frame.boards); break;
    case "sensor": renderSensor(frame); break;
    case "approval_request": addApproval(frame); break;
    case "approval_resolved": removeApproval(frame.id); break;
    case "job_result": // a scheduled job delivered to phones ([[jobs]] deliver = ["phones"])
      showBanner(`Scheduled job ${clip(frame.job, 64)}: ${clip(frame.text, 600)}`, "info");
      break;
    case "estop":
      showBanner(frame.failures.length ? `Emergency stop: some outputs failed: ${frame.failures.join("; ")}` : "Emergency stop: every output is at its safe value.", "info");
      refreshLatch();
      break;
    case "estop_reset": refreshLatch(); break;
    default: break;
  }
}

// --- dashboard ----------------------------------------------------------------------------

function remember(kind, value) {
  try {
    const last = JSON.parse(localStorage.getItem(LAST_KEY) || "{}");
    last[kind] = value;
    last.time = Date.now();
    localStorage.setItem(LAST_KEY, JSON.stringify(last));
  } catch { /* storage full or off: only the offline view loses its values */ }
}

function showLastKnown() {
  let last = null;
  try { last = JSON.parse(localStorage.getItem(LAST_KEY) || "null"); } catch { last = null; }
  if (!last) return;
  if (last.devices) renderDevices(last.devices, false);
  if (last.boards) renderBoards(last.boards, false);
  $("devices-note").textContent = lastKnownNote();
}

function lastKnownNote() {
  let time = null;
  try { time = JSON.parse(localStorage.getItem(LAST_KEY) || "{}").time; } catch { time = null; }
  return time ? `Last known values, from ${new Date(time).toLocaleTimeString()}.` : "";
}

function renderBoards(boards, fresh = true) {
  if (fresh) remember("boards", boards);
  $("boards").replaceChildren(...boards.map((b) => el("li", { class: `card board ${b.healthy ? "ok" : "failed"}` },
    el("strong", { text: b.name }),
    el("span", { class: "muted", text: ` ${b.board_type}` }),
    el("p", { class: "board-state", text: `${b.healthy ? "Connected" : "Not connected"}: ${b.detail}` }))));
}

function describe(device) {
  if (OUTPUT_LEVEL.has(device.kind)) return `level ${Number(device.value).toFixed(2)}`;
  if (device.mode === "input") return device.value ? "active" : "inactive";
  return device.value ? "on" : "off";
}

function renderDevices(devices, fresh = true) {
  if (fresh) { remember("devices", devices); $("devices-note").textContent = ""; }
  const list = $("devices");
  const focused = document.activeElement && document.activeElement.dataset.device;
  state.devices = new Map(devices.map((d) => [d.device, d]));
  list.replaceChildren(...devices.map(deviceCard));
  if (focused) {
    const again = list.querySelector(`[data-device="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  }
}

function deviceCard(device) {
  const on = Boolean(device.value);
  const status = el("p", { class: "device-status", role: "status", id: `status-${device.device}` });
  const card = el("li", { class: `card device ${on ? "on" : "off"}`, "data-name": device.device },
    el("strong", { text: device.device }),
    el("span", { class: "muted", text: ` ${device.kind} on ${device.pin}` }),
    el("p", { class: "device-state", "data-state": describe(device), text: `State: ${describe(device)}` }));
  if (OUTPUT_SWITCH.has(device.kind)) {
    // A switch control: its name is the device, its state is aria-checked (a button
    // labelled "On" reads like an action).
    card.append(el("button", {
      type: "button", role: "switch", "aria-checked": on ? "true" : "false",
      "aria-label": device.device, "data-device": device.device, class: "switch",
      onclick: () => act(device.device, { on: !on }, status),
    }, el("span", { class: "thumb", "aria-hidden": "true" })));
  } else if (OUTPUT_LEVEL.has(device.kind)) {
    // The slider stops at the device's cap (max_level), so it cannot ask for a refused level.
    const min = typeof device.min === "number" ? device.min : device.kind === "servo" ? -1 : 0;
    const max = typeof device.max === "number" ? device.max : 1;
    const input = el("input", {
      type: "range", min, max, step: 0.05, value: device.value,
      "aria-label": `${device.device} level`, "data-device": device.device,
    });
    input.addEventListener("change", () => act(device.device, { level: Number(input.value) }, status));
    card.append(input);
  }
  card.append(status);
  return card;
}

async function act(device, body, status) {
  status.textContent = "Waiting for the device (and any approval)…";
  try {
    await api("POST", `/api/peripherals/${encodeURIComponent(device)}`, body);
    status.textContent = "";
    refreshDevices();
  } catch (err) {
    if (!(err instanceof TokenRejected)) status.textContent = refusal(err);
  }
}

// A refusal for a person: the policy's and the tool's messages are written for the model
// ("... call gpio_set_level with ..."); show what happened, in one short sentence.
function refusal(err) {
  const text = String(err.message || "");
  if (/approv/i.test(text) && /(refused|denied|no answer|not approved)/i.test(text)) return "Not done: nobody approved it.";
  if (/rate|per hour|too many/i.test(text)) return "Not done: too many changes in a short time; try again later.";
  if (/range|cap|max_level|above|below|between/i.test(text)) return "Not done: that level is outside what this device allows.";
  if (/read.?only|autonomy/i.test(text)) return "Not done: the device is set to look, not act.";
  if (err.code === "policy_refused") return "Not done: the device's safety rules do not allow it.";
  const first = text.split(/(?<=[.;])\s/)[0];
  return `Not done: ${first.length > 120 ? `${first.slice(0, 119)}…` : first}`;
}

function sensorEntry(name) {
  let entry = state.sensors.get(name);
  if (!entry) {
    entry = { reading: null, error: "", series: {}, units: {}, note: "" };
    state.sensors.set(name, entry);
    loadSensorHistory(name);
  }
  return entry;
}

function renderSensor(frame) {
  const entry = sensorEntry(frame.sensor);
  if (frame.ok) {
    entry.reading = frame.reading;
    entry.error = "";
    for (const [quantity, value] of Object.entries(frame.reading.values)) {
      if (typeof value !== "number") continue;
      entry.units[quantity] = frame.reading.units[quantity] || entry.units[quantity] || "";
      addPoints(entry, quantity, [[frame.reading.time, value]]);
    }
  } else entry.error = frame.error;
  drawSensors();
}

// Points in time order, newer than the last one kept, within the range, at most SERIES_MAX.
function addPoints(entry, quantity, points) {
  const series = entry.series[quantity] || (entry.series[quantity] = []);
  for (const point of points) {
    if (!series.length || point[0] > series[series.length - 1][0]) series.push(point);
  }
  trim(series);
}

// Within the range of the newest point (the device's clock, not this phone's), at most SERIES_MAX.
function trim(series) {
  const oldest = series.length ? series[series.length - 1][0] - RANGES[state.range].seconds : 0;
  while (series.length && (series[0][0] < oldest || series.length > SERIES_MAX)) series.shift();
}

function drawSensors() {
  $("sensors").replaceChildren(...[...state.sensors].map(([name, e]) => sensorCard(name, e)));
}

// The stored history of the picked range; live readings keep appending after it. A failure
// leaves the live chart and says why in a short note.
async function loadSensorHistory(name) {
  const range = state.range;
  const entry = state.sensors.get(name);
  try {
    const data = await api("GET", `/api/sensors/${encodeURIComponent(name)}/history?window=${range}&points=${HISTORY_POINTS}`);
    if (state.range !== range || state.sensors.get(name) !== entry) return; // picked again meanwhile
    const live = entry.series;
    entry.series = {};
    for (const q of data.quantities.slice(0, 16)) {
      entry.units[q.quantity] = q.unit;
      addPoints(entry, q.quantity, q.points.filter((p) => Array.isArray(p) && p.length === 2));
    }
    for (const [quantity, points] of Object.entries(live)) addPoints(entry, quantity, points);
    entry.note = data.quantities.some((q) => q.points.length) ? "" : `Nothing stored in the ${RANGES[range].name} yet.`;
  } catch (err) {
    if (err instanceof TokenRejected || state.range !== range) return;
    entry.note = err.code === "history_empty"
      ? "Nothing stored yet: the service writes readings every few seconds while it runs (none for a sensor with update_interval = \"never\")."
      : err.code === "history_off"
      ? "No history is kept: give this sensor an update_interval to keep its readings."
      : `History could not be loaded (${clip(err.message, 100)}); showing live readings.`;
  }
  drawSensors();
}

function pickRange(range) {
  if (!RANGES[range]) return;
  state.range = range;
  try { localStorage.setItem(RANGE_KEY, range); } catch { /* only the choice is not kept */ }
  markRange();
  for (const [name, entry] of state.sensors) {
    for (const series of Object.values(entry.series)) trim(series);
    loadSensorHistory(name);
  }
  drawSensors();
}

function markRange() {
  for (const button of $("chart-range").querySelectorAll("button")) {
    button.setAttribute("aria-pressed", button.dataset.range === state.range ? "true" : "false");
  }
}

function sensorCard(name, entry) {
  const card = el("li", { class: "card sensor", "data-name": name }, el("strong", { text: name }));
  if (entry.reading && entry.reading.time) {
    card.append(el("span", { class: "muted", text: ` read ${new Date(entry.reading.time * 1000).toLocaleTimeString()}` }));
  }
  if (entry.error) card.append(el("p", { class: "error", text: entry.error }));
  const values = entry.reading ? entry.reading.values : {};
  const quantities = [...new Set([...Object.keys(values), ...Object.keys(entry.series)])];
  for (const quantity of quantities) {
    const unit = entry.units[quantity] || "";
    if (quantity in values) {
      const value = values[quantity];
      const shown = typeof value === "number" ? Number(value.toFixed(2)) : value;
      card.append(el("p", { class: "reading", text: `${quantity}: ${shown} ${unit}` }));
    } else card.append(el("p", { class: "reading", text: `${quantity} (stored)` }));
    card.append(chart(entry.series[quantity] || [], `${name} ${quantity}`, unit));
  }
  if (entry.note) card.append(el("p", { class: "chart-note muted", text: entry.note }));
  return card;
}

// --- charts (SVG, drawn here: no library) ---------------------------------------------------

const SVG_NS = "http://www.w3.org/2000/svg";
const CHART = { w: 320, h: 136, left: 42, right: 10, top: 18, bottom: 22 };

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// Round ticks covering lo..hi: [ticks, decimals].
function valueTicks(lo, hi) {
  if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
  const raw = (hi - lo) / 3;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9) + (Math.abs(step / mag - 2.5) < 1e-6 ? 1 : 0));
  const ticks = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step * 0.999; v += step) ticks.push(v);
  return [ticks, decimals];
}

// Time ticks at round local times (at most 5) and how to label them.
function timeTicks(t0, t1) {
  const steps = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400];
  const step = steps.find((s) => (t1 - t0) / s <= 4) || 7 * 86400;
  const offset = -new Date(t1 * 1000).getTimezoneOffset() * 60; // local midnight, round hours
  const ticks = [];
  for (let t = Math.ceil((t0 + offset) / step) * step - offset; t <= t1; t += step) ticks.push(t);
  if (!ticks.length) ticks.push(t1); // a span shorter than a step: its end is labelled
  const label = step >= 86400
    ? (t) => new Date(t * 1000).toLocaleDateString([], { weekday: "short" })
    : (t) => new Date(t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return [ticks, label];
}

function chart(points, label, unit) {
  const { w, h, left, right, top, bottom } = CHART;
  const range = RANGES[state.range];
  const node = svg("svg", { viewBox: `0 0 ${w} ${h}`, class: "chart", role: "img", "data-range": state.range });
  node.append(svg("rect", { class: "plot", x: left, y: top, width: w - left - right, height: h - top - bottom }));
  node.append(svg("text", { class: "unit", x: 2, y: 11 }, unit));
  // The newest point ends the time axis; it starts at the range's start, or at the first point
  // when less is stored.
  const end = points.length ? points[points.length - 1][0] : 0;
  const shown = points.filter((p) => p[0] >= end - range.seconds);
  node.setAttribute("data-points", String(shown.length));
  if (!shown.length) {
    node.setAttribute("aria-label", `${label}, ${range.name}: no readings yet`);
    node.append(svg("text", { class: "empty", x: (left + w - right) / 2, y: (top + h - bottom) / 2, "text-anchor": "middle" }, "no readings yet"));
    return node;
  }
  const values = shown.map((p) => p[1]);
  const [yTicks, decimals] = valueTicks(Math.min(...values), Math.max(...values));
  const lo = yTicks[0], hi = yTicks[yTicks.length - 1];
  const t0 = shown.length > 1 ? shown[0][0] : end - 60;
  const x = (t) => left + (t - t0) / Math.max(end - t0, 1e-9) * (w - left - right);
  const y = (v) => h - bottom - (v - lo) / (hi - lo) * (h - top - bottom);
  const axes = svg("g", { class: "axes", "aria-hidden": "true" });
  for (const v of yTicks) {
    axes.append(svg("line", { x1: left, x2: w - right, y1: y(v).toFixed(1), y2: y(v).toFixed(1) }));
    axes.append(svg("text", { class: "y", x: left - 4, y: (y(v) + 3.5).toFixed(1), "text-anchor": "end" }, v.toFixed(decimals)));
  }
  const [xTicks, timeLabel] = timeTicks(t0, end);
  for (const t of xTicks) {
    const anchor = x(t) < left + 16 ? "start" : x(t) > w - right - 16 ? "end" : "middle";
    axes.append(svg("text", { class: "x", x: x(t).toFixed(1), y: h - 6, "text-anchor": anchor }, timeLabel(t)));
  }
  node.append(axes);
  const coords = shown.length === 1
    ? [[left, y(shown[0][1])], [w - right, y(shown[0][1])]] // one reading: a flat line
    : shown.map(([t, v]) => [x(t), y(v)]);
  node.append(svg("polyline", { points: coords.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(" ") }));
  const when = (t) => new Date(t * 1000).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" });
  node.setAttribute("aria-label", `${label}, ${range.name}: ${shown.length} points from ${Math.min(...values).toFixed(1)} to ${Math.max(...values).toFixed(1)} ${unit}, ${when(t0)} to ${when(end)}`);
  return node;
}

async function refreshDevices() {
  try {
    const data = await api("GET", "/api/peripherals");
    renderLatch(data.estop);
    renderDevices(data.devices);
    renderBoards(data.peripherals);
    await refreshCameras();
  } catch (err) {
    if (!(err instanceof TokenRejected)) $("devices-note").textContent = `${err.message}. ${lastKnownNote()}`;
  }
}

// Each camera's newest stored picture (viewing takes no picture). An <img> cannot send the
// token, so the JPEG is fetched with it and shown as a data: URL (the page's CSP allows those).
async function refreshCameras() {
  const data = await api("GET", "/api/cameras");
  const cameras = data.cameras || [];
  $("cameras-section").hidden = cameras.length === 0;
  $("cameras").replaceChildren(...(await Promise.all(cameras.map(cameraCard))));
}

function dataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(new Error("the picture could not be read"));
    reader.readAsDataURL(blob);
  });
}

// A picture the turn took, by its URL (never its bytes in a frame); fetched with the token, as
// the Devices screen's. A picture the camera no longer keeps says so.
function turnPicture(picture) {
  const figure = el("figure", { class: "turn-picture" });
  const alt = `Picture from ${picture.camera}`;
  fetch(picture.url, { headers: { Authorization: `Bearer ${state.token}` } })
    .then((response) => {
      if (!response.ok) throw new Error(response.status === 404 ? "no longer kept on the device" : `HTTP ${response.status}`);
      return response.blob();
    })
    .then(dataUrl)
    .then((src) => figure.append(el("img", { class: "snapshot", src, alt })))
    .catch((err) => figure.append(el("figcaption", { class: "muted", text: `${alt}: ${err.message}` })));
  return figure;
}

async function cameraCard(camera) {
  const card = el("li", { class: "card camera", "data-name": camera.name }, el("strong", { text: camera.name }));
  if (!camera.latest) {
    card.append(el("p", { class: "muted", text: "No picture yet: ask for one in the chat." }));
    return card;
  }
  try {
    const response = await fetch(camera.latest, { headers: { Authorization: `Bearer ${state.token}` } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const src = await dataUrl(await response.blob());
    card.append(el("img", { class: "snapshot", src, alt: `Latest picture from ${camera.name}` }));
  } catch (err) {
    card.append(el("p", { class: "muted", text: `The picture did not load: ${err.message}` }));
  }
  return card;
}

async function estop() {
  const button = $("estop");
  button.disabled = true;
  try {
    const data = await api("POST", "/api/estop");
    showBanner(data.ok ? "Emergency stop: every output is at its safe value." : `Emergency stop: some outputs failed: ${data.failures.join("; ")}`, "info");
    refreshDevices(); // shows the latch too
  } catch (err) {
    if (!(err instanceof TokenRejected)) showBanner(`Emergency stop failed: ${err.message}. Cut the power if anything is unsafe.`, "error");
  } finally {
    button.disabled = false;
  }
}

// The stop latches: nothing drives an output until a person resets it here (or on the CLI,
// or in Telegram). The reset switches nothing back on.
function renderLatch(estop) {
  const latched = Boolean(estop && estop.latched);
  $("latch").hidden = !latched;
  if (!latched) return;
  const since = estop.since ? new Date(estop.since * 1000).toLocaleTimeString() : "";
  $("latch-text").textContent = `Emergency stop latched${since ? ` since ${since}` : ""} (${clip(estop.why || "estop", 120)}). Every output stays at its safe level; nothing can switch until it is reset.`;
}

async function refreshLatch() {
  if (!state.token) return;
  try {
    renderLatch((await api("GET", "/api/estop")).estop);
  } catch (err) {
    if (!(err instanceof TokenRejected)) showBanner(`The emergency stop's state is unknown: ${err.message}`, "error");
  }
}

async function resetLatch() {
  if (!window.confirm("Reset the emergency stop? Outputs stay off; you switch them on again yourself.")) return;
  const button = $("latch-reset");
  button.disabled = true;
  try {
    const data = await api("POST", "/api/estop/reset");
    renderLatch(data.estop);
    showBanner("Emergency stop reset: every output is still at its safe level.", "info");
  } catch (err) {
    if (!(err instanceof TokenRejected)) showBanner(`Reset failed: ${err.message}`, "error");
  } finally {
    button.disabled = false;
  }
}

// --- approvals ----------------------------------------------------------------------------

function addApproval(frame) {
  if (state.approvals.some((a) => a.id === frame.id)) return;
  state.approvals.push(frame);
  nextApproval();
}

function removeApproval(id) {
  state.approvals = state.approvals.filter((a) => a.id !== id);
  if (state.shownApproval === id) { state.shownApproval = null; $("approval").close(); nextApproval(); }
}

function nextApproval() {
  const dialog = $("approval");
  if (state.shownApproval || !state.approvals.length) return;
  const request = state.approvals[0];
  state.shownApproval = request.id;
  $("approval-device").textContent = request.device || "(no device)";
  $("approval-action").textContent = request.action || request.summary || request.tool;
  // What a person decides on: device, action, value; never tool names or session ids.
  const on = request.arguments && request.arguments.on;
  $("approval-value").textContent = typeof on === "boolean" ? (on ? "on" : "off") : approvalValue(request.value);
  $("approval-tool").textContent = request.session_id && request.session_id === state.sessionId
    ? "your chat on this phone" : "another chat or an automation";
  $("approval-more").textContent = request.summary && request.summary !== request.action ? request.summary : "";
  // Not modal: the STOP button in the header stays in reach while a request waits.
  dialog.show();
  $("deny").focus(); // the safe answer first: Enter on a surprise prompt must not switch anything
}

function approvalValue(value) {
  if (value === true) return "on";
  if (value === false) return "off";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : `${Math.round(value * 100)} %`;
  if (value === null || value === undefined || value === "") return "—";
  return String(value).slice(0, 80);
}

async function answerApproval(approved) {
  const id = state.shownApproval;
  if (!id) return;
  try {
    await api("POST", `/api/approvals/${encodeURIComponent(id)}`, { approved });
  } catch (err) {
    if (!(err instanceof TokenRejected) && err.code !== "approval_unknown") showBanner(`Could not answer: ${err.message}`, "info");
  }
  removeApproval(id);
}

// --- sessions and settings ----------------------------------------------------------------

async function loadSessions() {
  const list = $("sessions");
  try {
    const data = await api("GET", "/api/sessions");
    list.replaceChildren(...data.sessions.map((s) => sessionCard(s)));
    if (!data.sessions.length) list.replaceChildren(el("li", { class: "muted", text: "No stored sessions yet." }));
  } catch (err) {
    if (!(err instanceof TokenRejected)) list.replaceChildren(el("li", { class: "error", text: err.message }));
  }
}

function sessionCard(s) {
  // A title is the first message, with the time stamp the engine puts on it for the model.
  const title = (s.title || "").replace(/^\[[^\]]{1,40}\] /, "") || s.session_id;
  return el("li", { class: "card session" },
      el("strong", { text: title }),
      el("p", { class: "muted", text: `${s.message_count} messages, ${new Date(s.updated_at * 1000).toLocaleString()}${s.session_id === state.sessionId ? " (open)" : ""}` }),
      el("button", { type: "button", text: "Resume", "aria-label": `Resume ${title}`, onclick: () => resume(s.session_id) }));
}

function resume(sessionId) {
  state.sessionId = sessionId;
  if (sessionId) localStorage.setItem(SESSION_KEY, sessionId); else localStorage.removeItem(SESSION_KEY);
  $("messages").replaceChildren();
  state.turn = null;
  state.sentOnce = false;
  setBusy(false);
  const old = state.ws;
  state.ws = null;
  if (old) old.close();
  connectWs();
  show("chat");
  $("message").focus();
}

async function loadPersonality() {
  const file = $("personality-file").value;
  const text = $("personality-text");
  $("personality-status").textContent = "Loading…";
  text.disabled = true; // what is typed now would be overwritten by the file
  try {
    const data = await api("GET", `/api/personality/${file}`);
    if ($("personality-file").value !== file) return; // another file was picked meanwhile
    text.value = data.content;
    $("personality-status").textContent = data.exists ? "" : `${file} does not exist yet; saving creates it.`;
  } catch (err) {
    if (!(err instanceof TokenRejected)) $("personality-status").textContent = err.message;
  } finally {
    if ($("personality-file").value === file) text.disabled = false;
  }
}

async function savePersonality(event) {
  event.preventDefault();
  const file = $("personality-file").value;
  try {
    const data = await api("PUT", `/api/personality/${file}`, { content: $("personality-text").value });
    $("personality-status").textContent = `${file}: ${data.message}`;
  } catch (err) {
    if (!(err instanceof TokenRejected)) $("personality-status").textContent = err.message;
  }
}

// --- start --------------------------------------------------------------------------------

function disconnect() {
  clearTimeout(state.wsTimer);
  clearTimeout(state.sseTimer);
  const ws = state.ws;
  state.ws = null;
  if (ws) ws.close();
  if (state.sse) state.sse.abort();
  state.sse = null;
  state.online = { ws: false, sse: false };
}

async function pairingRequired() {
  // With [gateway] require_pairing = false every request is let in: no code to ask for.
  try { return (await fetch("/api/tools", { cache: "no-store" })).status === 401; } catch { return true; }
}

async function start() {
  measureBar();
  if (!state.token && !(await pairingRequired())) state.token = "pairing-off";
  if (!state.token) { setLinkState("Not paired"); show("pair"); $("pair-code").focus(); return; }
  setLinkState("Connecting…");
  showLastKnown();
  show(state.screen);
  connectWs();
  connectSse();
  refreshDevices();
}

document.addEventListener("DOMContentLoaded", () => {
  $("pair-form").addEventListener("submit", pair);
  $("composer").addEventListener("submit", sendMessage);
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("composer").requestSubmit(); }
  });
  $("abort").addEventListener("click", () => send({ type: "abort" }));
  $("regenerate").addEventListener("click", () => { if (send({ type: "regenerate" })) setBusy(true); });
  $("estop").addEventListener("click", estop);
  $("latch-reset").addEventListener("click", resetLatch);
  $("approve").addEventListener("click", () => answerApproval(true));
  $("deny").addEventListener("click", () => answerApproval(false));
  $("approval").addEventListener("keydown", (event) => { if (event.key === "Escape") { event.preventDefault(); answerApproval(false); } });
  for (const button of $("tabs").querySelectorAll("button")) {
    button.addEventListener("click", () => show(button.dataset.screen));
  }
  for (const button of $("chart-range").querySelectorAll("button")) {
    button.addEventListener("click", () => pickRange(button.dataset.range));
  }
  markRange();
  $("new-chat").addEventListener("click", () => resume(null));
  $("refresh-sessions").addEventListener("click", loadSessions);
  $("personality-file").addEventListener("change", loadPersonality);
  $("personality-form").addEventListener("submit", savePersonality);
  $("unpair").addEventListener("click", () => {
    state.token = null;
    localStorage.removeItem(TOKEN_KEY);
    localStorage.removeItem(SESSION_KEY);
    localStorage.removeItem(LAST_KEY);
    state.sessionId = null;
    disconnect();
    start();
  });
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js").catch((err) => console.warn("no offline shell:", err));
  }
  start();
});
