// A training checkpoint as one file: a JSON header line, then each tensor's float32 values in the
// header's order, then the trainer's own state (Adam's moments) as bytes.
import fs from 'node:fs';
import { RunError } from './errors.js';

/** @typedef {import('sparsekit-wasm/onnx').RecoverState} RecoverState */

/** @param {RecoverState} s */
function encodeState(s) {
  /** @type {[string, string, number][]} */
  const index = [];
  /** @type {Buffer[]} */
  const parts = [];
  for (const which of /** @type {const} */ (['params', 'best'])) {
    for (const [name, v] of Object.entries(s[which])) { index.push([which, name, v.length]); parts.push(Buffer.from(v.buffer, v.byteOffset, v.byteLength)); }
  }
  if (s.trainer) { index.push(['trainer', '', s.trainer.length]); parts.push(Buffer.from(s.trainer.buffer, s.trainer.byteOffset, s.trainer.byteLength)); }
  const head = JSON.stringify({ format: 'sparsekit-recover', version: s.version, epoch: s.epoch, steps: s.steps, bestScore: s.bestScore, history: s.history, index });
  return Buffer.concat([Buffer.from(`${head}\n`), ...parts]);
}

/** Saves atomically (temporary file + rename). @param {string} file @param {RecoverState} s */
export function saveState(file, s) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, encodeState(s));
  fs.renameSync(tmp, file);
}

/** @param {string} file @returns {RecoverState} */
export function readState(file) {
  const buf = fs.readFileSync(file);
  const nl = buf.indexOf(10);
  /** @type {{ format?: string, version?: number, epoch: number, steps: number, bestScore: number, history: RecoverState['history'], index: [string, string, number][] }} */
  let head;
  try { head = JSON.parse(buf.subarray(0, nl).toString('utf8')); } catch { throw new RunError(`${file} is not a recover checkpoint`); }
  if (head.format !== 'sparsekit-recover' || head.version !== 1 || !Array.isArray(head.index)) throw new RunError(`${file} is not a recover checkpoint (version 1)`);
  /** @type {RecoverState} */
  const s = { version: 1, epoch: head.epoch, steps: head.steps, bestScore: head.bestScore, history: head.history, params: {}, best: {} };
  let off = nl + 1;
  for (const [which, name, n] of head.index) {
    const bytes = which === 'trainer' ? n : 4 * n;
    if (!Number.isInteger(n) || n < 0 || off + bytes > buf.length) throw new RunError(`${file} is truncated`);
    if (which === 'trainer') s.trainer = new Uint8Array(buf.subarray(off, off + n));
    else {
      const v = new Float32Array(n);
      new Uint8Array(v.buffer).set(buf.subarray(off, off + bytes));
      (which === 'best' ? s.best : s.params)[name] = v;
    }
    off += bytes;
  }
  return s;
}
