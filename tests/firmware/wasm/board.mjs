// A MicroPython board on the webassembly port, behind stdin/stdout (the Python side puts a
// pty in front): REPL bytes in, REPL bytes out, and a JS module registered as `machine`
// standing in for the hardware with the same semantics as the virtual board's simulated
// machine (clawseed_edge/peripherals/serial/sim_machine.py).
//
// Usage: node board.mjs MICROPYTHON_MJS [CONFIG_JSON]
//   CONFIG_JSON: {"adc": {"PA0": 32768}, "inputs": {"PA10": 0}, "i2c": [118]}
//
// The port's quirks, handled here:
// - its stdin is the REPL's, so the tests run the firmware's UART loop from the raw REPL on
//   pollable streams of their own (tests/firmware/test_wasm.py);
// - raw-paste mode hangs: the request (Ctrl-E 'A' Ctrl-A) is answered "R\x00" (understood,
//   not supported) here, so clients fall back to the plain raw REPL;
// - errors inside JS functions cannot become OSError: a missing I2C device throws a JS Error.
//
// Like the stm32 images up to v1.27 that boards are flashed with, `machine` has no PWM: the
// firmware drives PWM through `pyb.Timer` channels, one frequency per timer. The module
// `simstate` lets a test read the simulated pins (JSON strings).
import { pathToFileURL } from "node:url";

const { loadMicroPython } = await import(pathToFileURL(process.argv[2]).href);
const config = JSON.parse(process.argv[3] || "{}");

// --- the simulated hardware ---------------------------------------------------------------
const state = {
  modes: {},
  outputs: {},
  inputs: { ...(config.inputs || {}) },
  pulls: {},
  adc: { ...(config.adc || {}) },
  pwm: {},
  i2c: {},
  timers: {}, // timer number -> frequency
  timerInits: {}, // timer number -> how often it was (re)initialised
  routes: {}, // pin -> [timer, channel] while a timer channel drives it
};
const channels = {}; // pin -> its timer channel
for (const addr of config.i2c || []) state.i2c[addr] = { regs: new Uint8Array(256), ptr: 0 };

function level(name) {
  if (state.modes[name] === "out") return state.outputs[name] || 0;
  if (name in state.inputs) return state.inputs[name];
  return state.pulls[name] === "up" ? 1 : 0;
}

function Pin(name, mode, pull) {
  const pin = {
    name,
    init(m, p) {
      // A pin made plain input or output leaves its timer channel (its alternate function).
      if (name in state.routes) { delete state.routes[name]; delete state.pwm[name]; }
      if (m === Pin.OUT) {
        state.modes[name] = "out";
        if (!(name in state.outputs)) state.outputs[name] = 0;
      } else {
        state.modes[name] = "in";
        state.pulls[name] = p === Pin.PULL_UP ? "up" : p === Pin.PULL_DOWN ? "down" : null;
      }
    },
    value(v) {
      if (v === undefined) return level(name);
      state.outputs[name] = v ? 1 : 0;
      return null;
    },
  };
  if (mode !== undefined) pin.init(mode, pull);
  return pin;
}
Pin.IN = 0;
Pin.OUT = 1;
Pin.PULL_UP = 1;
Pin.PULL_DOWN = 2;

// pyb.Timer: one counter per timer, so one frequency for all its channels.
function routeDuty(pin, timer, percent) {
  state.pwm[pin] = [state.timers[timer], Math.round((percent * 65535) / 100)];
}

function Timer(n, opts) {
  state.timerInits[n] = (state.timerInits[n] || 0) + 1;
  state.timers[n] = opts.freq;
  const update = () => {
    for (const [pin, [t]] of Object.entries(state.routes)) if (t === n) routeDuty(pin, n, channels[pin].percent);
  };
  update();
  return {
    freq(hz) {
      if (hz === undefined) return state.timers[n];
      state.timers[n] = hz;
      update();
      return null;
    },
    channel(ch, mode, o) {
      const pin = o.pin.name;
      for (const [other, [t, c]] of Object.entries(state.routes)) {
        if (t === n && c === ch) { delete state.routes[other]; delete state.pwm[other]; }
      }
      const channel = {
        percent: 0,
        pulse_width_percent(p) {
          if (p === undefined) return channel.percent;
          channel.percent = p;
          const r = state.routes[pin];
          if (r && r[0] === n && r[1] === ch) routeDuty(pin, n, p);
          return null;
        },
      };
      channels[pin] = channel;
      state.routes[pin] = [n, ch];
      channel.pulse_width_percent(o.pulse_width_percent || 0);
      return channel;
    },
    deinit() {
      for (const [pin, [t]] of Object.entries(state.routes)) {
        if (t === n) { delete state.routes[pin]; delete state.pwm[pin]; }
      }
      delete state.timers[n];
    },
  };
}
Timer.PWM = 0;

function ADC(pin) {
  return { read_u16: () => state.adc[pin.name] || 0 };
}

function SoftI2C(opts) {
  const dev = (addr) => {
    const d = state.i2c[addr];
    if (d === undefined) throw new Error("ENODEV: no I2C device at " + addr);
    return d;
  };
  const read = (d, n) => {
    const out = [];
    for (let i = 0; i < n; i++) { out.push(d.regs[d.ptr]); d.ptr = (d.ptr + 1) % 256; }
    return out;
  };
  const write = (d, bytes) => {
    if (!bytes.length) return;
    d.ptr = bytes[0];
    for (const b of bytes.slice(1)) { d.regs[d.ptr] = b; d.ptr = (d.ptr + 1) % 256; }
  };
  return {
    scan: () => Object.keys(state.i2c).map(Number).sort((a, b) => a - b),
    readfrom: (addr, n) => read(dev(addr), n),
    readfrom_mem: (addr, reg, n) => { const d = dev(addr); d.ptr = reg; return read(d, n); },
    writeto: (addr, data) => write(dev(addr), Array.from(data)),
    writeto_mem: (addr, reg, data) => write(dev(addr), [reg, ...Array.from(data)]),
  };
}

// --- the REPL behind stdin/stdout ---------------------------------------------------------
let pending = [];
function out(bytes) {
  // Batch the port's byte-at-a-time output into one write per turn of the event loop.
  if (pending.length === 0) setImmediate(() => { process.stdout.write(Buffer.from(pending)); pending = []; });
  for (const b of bytes) pending.push(b);
}

const mp = await loadMicroPython({ stdout: out, linebuffer: false, heapsize: 2 * 1024 * 1024 });
// machine.WDT: started once, fed by the firmware's loop (this board never resets).
const wdt = { timeout: 0, feeds: 0 };
function WDT(opts) {
  wdt.timeout = opts.timeout;
  return { feed() { wdt.feeds += 1; } };
}

mp.registerJsModule("machine", { Pin, ADC, SoftI2C, WDT });
mp.registerJsModule("pyb", { Timer, Pin });
mp.registerJsModule("simstate", {
  pwm: () => JSON.stringify(state.pwm),
  timer_inits: () => JSON.stringify(state.timerInits),
  outputs: () => JSON.stringify(state.outputs),
  wdt: () => JSON.stringify(wdt),
});
mp.replInit();

let chain = Promise.resolve();
const feed = (b) => { chain = chain.then(() => mp.replProcessCharWithAsyncify(b)); };
let held = []; // a possible raw-paste request: Ctrl-E, 'A', Ctrl-A

function take(b) {
  if (held.length === 0) {
    if (b === 0x05) held.push(b); else feed(b);
    return;
  }
  if ((held.length === 1 && b === 0x41) || (held.length === 2 && b === 0x01)) {
    held.push(b);
    if (held.length === 3) {
      held = [];
      chain = chain.then(() => out([0x52, 0x00])); // "R\x00": raw paste not supported
    }
    return;
  }
  const replay = held;
  held = [];
  for (const h of replay) feed(h);
  take(b);
}

process.stdin.on("data", (data) => { for (const b of data) take(b); });
process.stdin.on("end", () => { chain.then(() => process.exit(0)); });
