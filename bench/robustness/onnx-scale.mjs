// Scale run of issue 14: a generated MatMul chain with >= 1.5 GiB of external data pruned by the CLI
// (`--sparsity 0.5`, per layer), with the CLI process's peak RSS (VmHWM, polled from /proc) and the
// sparsity found in the written file. Linux only (reads /proc). Writes ~3.2 GB under the temp dir
// and deletes it at the end.
// Usage: node bench/robustness/onnx-scale.mjs [--layers 24] [--dim 4096]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: opt } = parseArgs({ options: { layers: { type: 'string', default: '24' }, dim: { type: 'string', default: '4096' }, keep: { type: 'boolean' } } });
const { ModelProto, DT, loadOnnx } = await import('#onnx-internal');
const CLI = path.join(ROOT, 'tests/onnx/.out/bin/sparsekit-wasm.js');
const L = Number(opt.layers), D = Number(opt.dim);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-onnx-scale-'));
const src = path.join(dir, 'big.onnx');

// The model: y = x W_0 W_1 ... W_{L-1}, every W (D, D) float32 in big.onnx.data.
const fd = fs.openSync(`${src}.data`, 'w');
const initializer = [];
let s = 1;
const chunk = new Float32Array(D * D);
for (let l = 0; l < L; l++) {
  for (let i = 0; i < chunk.length; i++) { s = (s * 1103515245 + 12345) & 0x7fffffff; chunk[i] = (s / 0x7fffffff - 0.5) / 32; }
  fs.writeSync(fd, new Uint8Array(chunk.buffer));
  initializer.push({ name: `W${l}`, dims: [D, D], data_type: DT.FLOAT, data_location: 1,
    external_data: [{ key: 'location', value: 'big.onnx.data' }, { key: 'offset', value: String(l * chunk.byteLength) }, { key: 'length', value: String(chunk.byteLength) }] });
}
fs.closeSync(fd);
const vi = (name) => ({ name, type: { tensor_type: { elem_type: 1, shape: { dim: [{ dim_value: 1 }, { dim_value: D }] } } } });
const node = Array.from({ length: L }, (_, l) => ({ op_type: 'MatMul', name: `mm${l}`, input: [l ? `h${l}` : 'x', `W${l}`], output: [l === L - 1 ? 'y' : `h${l + 1}`] }));
fs.writeFileSync(src, ModelProto.encode(ModelProto.fromObject({ ir_version: 8, opset_import: [{ domain: '', version: 13 }], graph: { name: 'big', node, initializer, input: [vi('x')], output: [vi('y')] } })).finish());
const dataBytes = fs.statSync(`${src}.data`).size;

// Prune with the CLI, polling its high-water RSS.
const out = path.join(dir, 'big-pruned.onnx');
const t0 = Date.now();
const child = spawn(process.execPath, [CLI, 'prune', src, '-o', out, '--sparsity', '0.5', '--report', `${out}.json`, '-q'], { stdio: ['ignore', 'ignore', 'pipe'] });
let hwm = 0, stderr = '';
child.stderr.on('data', (d) => { stderr += d; });
const poll = setInterval(() => {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    if (m) hwm = Math.max(hwm, Number(m[1]) * 1024);
  } catch { /* exited */ }
}, 50);
const code = await new Promise((r) => child.on('exit', r));
clearInterval(poll);
const seconds = (Date.now() - t0) / 1000;
const report = code === 0 ? JSON.parse(fs.readFileSync(`${out}.json`, 'utf8')) : null;
let fileSparsity = null;
if (report) {
  const m = await loadOnnx(out);
  let z = 0, n = 0;
  for (const w of m.prunable()) { const v = m.readFloat(w); n += v.length; for (let i = 0; i < v.length; i++) if (v[i] === 0) z++; }
  fileSparsity = z / n;
}
const GiB = 1024 ** 3;
console.log(JSON.stringify({ layers: L, dim: D, externalDataGiB: dataBytes / GiB, exit: code, stderr: stderr.trim(), seconds,
  peakRssGiB: hwm / GiB, reportedSparsity: report?.sparsity ?? null, fileSparsity, outBytesGiB: report ? report.files.bytesAfter / GiB : null }, null, 2));
if (!opt.keep) fs.rmSync(dir, { recursive: true, force: true });
