// all-MiniLM-L6-v2 pruned / quantized by the CLI into drop-in transformers.js folders, loaded by
// pipeline('feature-extraction') of @huggingface/transformers in Node (offline), its embeddings
// (mean pooling, L2 norm: what the model card prescribes) against the original folder's pipeline()
// on real sentences (of the licences in /usr/share/common-licenses; calibration sentences from other
// licences). Beside them, onnxruntime's own quantize_dynamic (per channel, int8 weights: the q8 form)
// in the same layout, made with $PYTHON (default /work/venv/bin/python).
// Needs the real folder made by bench/models/minilm.py (default /work/models/all-MiniLM-L6-v2).
// Usage: node bench/quant/dropin.mjs [--model DIR] [--eval 256] [--calib 64] [--variants int8,int4,sgpt50-int8,ort-q8]
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { pipeline, env } from '@huggingface/transformers';

const { values } = parseArgs({ options: {
  model: { type: 'string', default: '/work/models/all-MiniLM-L6-v2' },
  eval: { type: 'string', default: '256' }, calib: { type: 'string', default: '64' },
  variants: { type: 'string', default: 'int8,int4,sgpt50-int8,ort-q8' },
  out: { type: 'string', default: 'bench/out/dropin' },
} });
const CLI = path.resolve('pkg/bin/sparsekit-wasm.js');
const out = path.resolve(values.out);
fs.mkdirSync(out, { recursive: true });
const t0 = Date.now();
const log = (m) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0)} s] ${m}`);

// Sentences of whole licence texts (40 to 220 characters, starting with a letter), evenly spaced:
// held-out ones from some licences, calibration ones from others, so no sentence is in both.
function sentences(names, n) {
  const seen = new Set(), out = [];
  for (const name of names) {
    const f = path.join('/usr/share/common-licenses', name);
    if (!fs.existsSync(f)) continue;
    for (const raw of fs.readFileSync(f, 'utf8').replace(/\s+/g, ' ').split(/(?<=[.;:])\s+/)) {
      const x = raw.trim();
      if (x.length >= 40 && x.length <= 220 && /^[A-Za-z"(]/.test(x) && !seen.has(x)) { seen.add(x); out.push(x); }
    }
  }
  return Array.from({ length: Math.min(n, out.length) }, (_, i) => out[Math.floor((i * out.length) / Math.min(n, out.length))]);
}
const evalLines = sentences(['GPL-3', 'Apache-2.0', 'LGPL-3', 'MPL-2.0', 'GFDL-1.3', 'Artistic', 'BSD'], Number(values.eval));
const calibLines = sentences(['GPL-2', 'LGPL-2.1', 'MPL-1.1', 'GFDL-1.2'], Number(values.calib));
const nCalib = calibLines.length;
const calibFile = path.join(out, 'calib.txt');
fs.writeFileSync(calibFile, calibLines.join('\n') + '\n');

const VARIANTS = {
  int8: ['--sparsity', '0', '--quantize', 'int8'],
  int4: ['--sparsity', '0', '--quantize', 'int4'],
  'sgpt50-int8': ['--sparsity', '0.5', '--method', 'sparsegpt', '--quantize', 'int8', '--calib', calibFile, '--calib-count', String(nCalib), '--seq-len', '128'],
};
const wanted = values.variants.split(',');
const built = {};
for (const name of wanted) {
  const dir = path.join(out, name);
  fs.rmSync(dir, { recursive: true, force: true });
  if (name === 'ort-q8') {
    // the same folder with onnxruntime's own q8 as onnx/model_quantized.onnx (and config.json as it is)
    fs.cpSync(values.model, dir, { recursive: true, filter: (f) => !f.endsWith('.onnx') });
    const py = `from onnxruntime.quantization import QuantType, quantize_dynamic\nquantize_dynamic(${JSON.stringify(path.join(values.model, 'onnx', 'model.onnx'))}, ${JSON.stringify(path.join(dir, 'onnx', 'model_quantized.onnx'))}, weight_type=QuantType.QInt8, per_channel=True)`;
    const s = Date.now();
    const r = spawnSync(process.env.PYTHON || '/work/venv/bin/python', ['-c', py], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ort-q8: ${r.stderr}`);
    built[name] = { command: 'onnxruntime.quantization.quantize_dynamic(model.onnx, weight_type=QInt8, per_channel=True)', seconds: (Date.now() - s) / 1000, layout: { dtype: 'q8', file: 'onnx/model_quantized.onnx' }, dtype: 'q8' };
    log('ort-q8 written');
    continue;
  }
  const args = ['prune', values.model, '-o', `${dir}/`, ...VARIANTS[name], '-q', '--report', path.join(out, `${name}.report.json`)];
  const s = Date.now();
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${name}: ${r.stderr}`);
  const report = JSON.parse(fs.readFileSync(path.join(out, `${name}.report.json`), 'utf8'));
  built[name] = { command: `sparsekit-wasm ${args.join(' ')}`, seconds: (Date.now() - s) / 1000, layout: report.layout, wrote: r.stdout.trim().split('\n').pop() };
  log(`${name}: ${built[name].wrote}`);
}

env.allowRemoteModels = false;
env.localModelPath = path.dirname(path.resolve(values.model));
/** Embeddings of the held-out lines through pipeline() of a folder (dtype from its config.json unless given). */
async function embed(folder, dtype) {
  env.localModelPath = path.dirname(folder);
  const p = await pipeline('feature-extraction', path.basename(folder), { local_files_only: true, ...(dtype ? { dtype } : {}) });
  const res = [];
  const s = Date.now();
  for (let i = 0; i < evalLines.length; i += 16) {
    const t = await p(evalLines.slice(i, i + 16), { pooling: 'mean', normalize: true });
    const d = t.dims[1];
    for (let k = 0; k < t.dims[0]; k++) res.push(t.data.slice(k * d, (k + 1) * d));
  }
  await p.dispose();
  return { emb: res, seconds: (Date.now() - s) / 1000 };
}
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
/** Each line's k nearest other lines (by cosine; the embeddings are unit vectors). */
const neighbours = (E, k) => E.map((e, i) => E.map((f, j) => [j === i ? -Infinity : dot(e, f), j]).sort((x, y) => y[0] - x[0]).slice(0, k).map((x) => x[1]));
const fileBytes = (f) => { const b = fs.readFileSync(f); return { raw: b.length, brotli9: zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9 } }).length }; };

const ref = await embed(path.resolve(values.model), 'fp32');
const refNb = neighbours(ref.emb, 10);
const rows = [{ variant: 'original (model.onnx, fp32)', dtype: 'fp32', ...fileBytes(path.join(values.model, 'onnx', 'model.onnx')), cosMean: 1, cosMin: 1, knn10: 1, embedSeconds: ref.seconds }];
for (const name of wanted) {
  const folder = path.join(out, name);
  const lay = built[name].layout;
  const { emb, seconds } = await embed(folder, built[name].dtype);
  const cos = emb.map((e, i) => dot(e, ref.emb[i]));
  const nb = neighbours(emb, 10);
  const kept = nb.reduce((s, n, i) => s + n.filter((j) => refNb[i].includes(j)).length, 0) / (10 * nb.length);
  rows.push({ variant: name, dtype: lay.dtype, file: lay.file, ...fileBytes(path.join(folder, lay.file)), cosMean: cos.reduce((a, b) => a + b, 0) / cos.length, cosMin: Math.min(...cos), knn10: kept, embedSeconds: seconds, buildSeconds: built[name].seconds, command: built[name].command });
  log(`${name}: loaded by pipeline() as ${lay.dtype}`);
}
const mib = (b) => (b / 2 ** 20).toFixed(2);
console.log(`| variant | dtype (file) | MiB | brotli-9 MiB | cosine mean / min | 10-NN kept | embed s (${evalLines.length} lines) |`);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.variant} | ${r.dtype}${r.file ? ` (${r.file})` : ''} | ${mib(r.raw)} | ${mib(r.brotli9)} | ${r.cosMean.toFixed(4)} / ${r.cosMin.toFixed(4)} | ${(100 * r.knn10).toFixed(1)}% | ${r.embedSeconds.toFixed(1)} |`);
fs.writeFileSync(path.join(out, 'dropin.json'), JSON.stringify({ date: new Date().toISOString(), model: values.model, eval: evalLines.length, calib: calibLines.length, rows }, null, 2));
