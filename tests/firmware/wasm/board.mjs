// A MicroPython board on the webassembly port, behind stdin/stdout (the Python side puts a
// pty in front): REPL bytes in, REPL bytes out, and a JS module registered as `machine`
// standing in for the hardware with the same semantics as the virtual board's simulated
// machine (clawseed_edge/peripherals/serial/sim_machine.py).
//
// Usage: node board.mjs MICROPYTHON_MJS [CONFIG_JSON]
//   CONFIG_JSON: {"adc": {"PA0": 32768}, "inputs": {"PA10": 0}, "i2c": [118]}
//
// The port's quirks, handled here:
// - it has no blocking stdin, so the firmware's UART loop cannot run; the tests drive the
//   firmware core through the raw REPL instead;
// - raw-paste mode hangs: the request (Ctrl-E 'A' Ctrl-A) is answered "R\x00" (understood,
//   not supported) here, so clients fall back to the plain raw REPL;
// - errors inside JS functions cannot become OSError: a missing I2C device throws a JS Error.
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
};
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

function PWM(pin, opts) {
  state.pwm[pin.name] = [opts.freq, opts.duty_u16];
  return {
    freq(hz) { state.pwm[pin.name][0] = hz; },
    duty_u16(d) { state.pwm[pin.name][1] = d; },
    deinit() { delete state.pwm[pin.name]; },
  };
}

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
mp.registerJsModule("machine", { Pin, PWM, ADC, SoftI2C });
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
