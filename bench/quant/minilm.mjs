// MiniLM-L6 (all-MiniLM-L6-v2) made small for bytes served, every variant of ours through runJob (the
// CLI's path: `prune --sparsity S | --nm 2:4 --method sparsegpt --quantize int8|int4 --calib`), side by
// side in one run with onnxruntime's own quantizers: brotli-9 size, ÷ onnxruntime's dynamic int8,
// embedding cosine to the float model (mean / min) and 10 nearest neighbours kept (the package's
// 'embedding' fidelity), the labelled task (bench/lib/debian-sections.mjs: Debian package
// descriptions -> their Section, kNN k = 10; the task of bench/text/minilm-recover.mjs), and latency
// in onnxruntime-node and onnxruntime-web (WASM), one thread, batch 1, interleaved runs.
// Needs the Python steps first (bench only):
//   /work/venv/bin/python bench/models/minilm.py --out DIR && /work/venv/bin/python bench/quant/prepare.py --model DIR
// Usage: node bench/quant/minilm.mjs [--model bench/out/models/all-MiniLM-L6-v2] [--only a,b] [--reuse]
//          [--calib-count 512] [--seq-len 32] [--reps 15] [--lat-sentences 8] [--out bench/out/quant/minilm.json]
//          [--train-count 8192] [--minutes 10] [--lr 6e-4] [--threads 1]
// --reuse: variants already written under bench/out/quant/minilm/ are read instead of rebuilt.
// "al4" rows: the same file with accuracy_level 4 set on every MatMulNBits (int8 compute of the
// activations per block; MatMulNBits' attribute in onnxruntime's contrib op schema). "f32" rows:
// the same file with its float16 4-bit scales widened back to float32 (withFloatScales).
// `ch<P>-<scheme>[-rec]` rows: P% of every channel group removed (SparseGPT-compensated, the default
// roundTo) jointly with the quantization of the row <scheme> (e.g. ch10-int4-g128-dyn-t3-nss-vocab);
// `-rec` recovers it held on its grids (the job's `recover`, as `prune --channels --quantize --recover`)
// on --train-count further descriptions for --minutes (cosine schedule at --lr, batches grouped by
// length, --threads workers), the kept epoch chosen on 128 validation descriptions.
// `file:PATH` rows: a model written elsewhere (the CLI's `prune -o PATH`), judged the same way.
// --text-out DIR: writes the bench's text as the CLI reads it (train.txt: the --train-count training
// descriptions, whose first --calib-count are the calibration rows' set; val.txt: the 128 validation
// descriptions), one per line, then exits.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { initThreadPool } from 'sparsekit-wasm';
import { runSet, makeOrtRunner, fidelity, runJob, OnnxModel } from '#onnx-internal';
import { median, quantile, sorted } from '../lib/stats.mjs';
import { debianSections, knnAccuracy } from '../lib/debian-sections.mjs';
import { encoderSamples } from '../lib/encoder-samples.mjs';
import { oneThreadOptions, oneThreadWeb, unpaddedFeeds, int64Feeds, interleavedLatency } from '../lib/ort-latency.mjs';

const { values } = parseArgs({ options: {
  model: { type: 'string', default: 'bench/out/models/all-MiniLM-L6-v2' },
  only: { type: 'string' }, reuse: { type: 'boolean', default: false },
  'calib-count': { type: 'string', default: '512' }, 'seq-len': { type: 'string', default: '32' },
  reps: { type: 'string', default: '15' }, 'lat-sentences': { type: 'string', default: '8' },
  out: { type: 'string', default: 'bench/out/quant/minilm.json' },
  'train-count': { type: 'string', default: '8192' }, minutes: { type: 'string', default: '10' }, lr: { type: 'string', default: '6e-4' },
  threads: { type: 'string', default: '1' },
  'text-out': { type: 'string' },
} });
const t0 = Date.now();
const log = (m) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0)} s, load ${os.loadavg()[0].toFixed(1)}] ${m}`);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const EMB = 'sentence_embedding';

const nCal = Number(values['calib-count']);
const { sections, ref, held, calLines, valLines, trainLines } = debianSections({ nCal, nTrain: Number(values['train-count']) });
if (values['text-out']) {
  fs.mkdirSync(values['text-out'], { recursive: true });
  fs.writeFileSync(path.join(values['text-out'], 'train.txt'), `${trainLines.join('\n')}\n`);
  fs.writeFileSync(path.join(values['text-out'], 'val.txt'), `${valLines.join('\n')}\n`);
  console.log(`${trainLines.length} training and ${valLines.length} validation descriptions written to ${values['text-out']}`);
  process.exit(0);
}
const seqLen = Number(values['seq-len']);
const { dense, denseBytes, samplesOf } = await encoderSamples(values.model, seqLen);
const refSet = samplesOf(ref.map(([d]) => d)), heldSet = samplesOf(held.map(([d]) => d)), calSet = samplesOf(calLines);
const runner = makeOrtRunner(ortNode, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const calibration = { samples: calSet.samples };
const threads = Number(values.threads);
if (threads > 1 && !(await initThreadPool(threads))) throw new Error(`--threads ${threads}: the pool could not start`);
const tokenizer = JSON.parse(fs.readFileSync(path.join(values.model, 'tokenizer.json'), 'utf8'));

/** Sets accuracy_level on every MatMulNBits of a file (the form onnxruntime computes it in). */
function withAccuracyLevel(bytes, level) {
  const m = OnnxModel.parse(bytes);
  for (const n of m.graph.node) {
    if (n.op_type !== 'MatMulNBits') continue;
    n.attribute = n.attribute.filter((a) => a.name !== 'accuracy_level');
    n.attribute.push({ name: 'accuracy_level', type: 2, i: level });
  }
  return m.encode();
}
/**
 * The file with its float16 4-bit scales (quant/half-scales.ts: an initializer behind a Cast)
 * widened back to float32 initializers read directly: the same codes and scale values, to measure
 * what the float16 storage (rather than the rounding to half precision) saves in the same run.
 */
function withFloatScales(bytes) {
  const m = OnnxModel.parse(bytes);
  const g = m.graph;
  const inits = new Map(g.initializer.map((t) => [t.name, t]));
  const casts = g.node.filter((n) => n.op_type === 'Cast' && inits.get(n.input[0])?.data_type === 10 && /_scales_f16(_\d+)?$/.test(n.input[0]));
  for (const n of casts) {
    const t = inits.get(n.input[0]);
    const v = m.readFloat(t);
    t.name = n.output[0];
    t.data_type = 1; // FLOAT
    m.writeFloat(t, v);
  }
  g.node = g.node.filter((n) => !casts.includes(n));
  return m.encode();
}
/**
 * The widened file (quant/int4-dynamic.ts) with one int8 scale per weight instead of one per output
 * column: every ReduceMax of the block scales over all axes, the scale Reshape to [1]. The same
 * 4-bit blocks, widened onto one int8 grid per tensor as onnxruntime's q8 quantizes (a probe of what
 * per-channel B scales cost in onnxruntime-web's MatMulInteger path, and in fidelity).
 */
function withTensorScale(bytes) {
  const m = OnnxModel.parse(bytes);
  const g = m.graph;
  const inits = new Map(g.initializer.map((t) => [t.name, t]));
  for (const n of g.node) {
    if (n.op_type === 'ReduceMax' && /_q4_max_scale(_\d+)?$/.test(n.name)) {
      if (n.input[1]) m.writeInts(inits.get(n.input[1]), [0, 1, 2]);
      else n.attribute.find((a) => a.name === 'axes').ints = [0, 1, 2];
    }
    if (n.op_type === 'Reshape' && /_q4_scale(_\d+)?$/.test(n.name)) m.writeInts(inits.get(n.input[1]), [1]);
  }
  return m.encode();
}
const DERIVED = { al4: (b) => withAccuracyLevel(b, 4), f32: withFloatScales, pt: withTensorScale };
const ortFile = (f) => () => ({ bytes: new Uint8Array(fs.readFileSync(path.join(values.model, 'onnx', f))) });
// a job's build keeps its spec (`.spec`), which the channel rows start from
const job = (j) => Object.assign(async () => {
  const m = OnnxModel.parse(denseBytes);
  const t = Date.now();
  const r = await runJob(m, j, { ort: runner });
  const q = r.report.quantize;
  const forms = {};
  for (const l of q?.layers ?? []) forms[l.form] = (forms[l.form] ?? 0) + 1;
  const zeroed = r.report.unreachableTokens?.tables.reduce((a, t) => a + t.rows, 0);
  return { bytes: m.encode(), seconds: (Date.now() - t) / 1000, forms, gptq: q?.gptq?.pass, ...(zeroed !== undefined ? { zeroedRows: zeroed } : {}) };
}, { spec: j });
const q = (scheme, extra = {}) => ({ scheme, ...extra });
/** `ch<P>-<row>[-rec]`: the job of VARIANTS' row <row> with P% of the channels removed (see the file comment). */
function channelVariant(n) {
  const m = /^ch(\d+)-(.+?)(-rec)?$/.exec(n);
  const base = m && VARIANTS[m[2]]?.[1]?.spec;
  if (!base) return undefined;
  const mode = { kind: 'channels', fraction: Number(m[1]) / 100 };
  if (!m[3]) return [`ours ${m[1]}% of the channels removed (SparseGPT) + ${VARIANTS[m[2]][0].replace(/^ours /, '')}`, job({ ...base, mode, method: 'sparsegpt' })];
  const samplesOfLines = (lines) => samplesOf(lines).samples;
  return [`ours ${m[1]}% of the channels removed (SparseGPT) + ${VARIANTS[m[2]][0].replace(/^ours /, '')}, recovered ${values.minutes} min on the grids`, async () => job({
    ...base, mode, method: 'sparsegpt',
    calibration: { ...base.calibration, samples: samplesOfLines(trainLines), statsLimit: nCal },
    eval: { samples: samplesOfLines(valLines) },
    recover: { minutes: Number(values.minutes), epochs: 1000, lr: Number(values.lr), schedule: 'cosine', groupByLength: true },
  })()];
}
// name -> [label, build]; a build [from, transform] is the file of row `from` transformed (DERIVED).
const VARIANTS = {
  float32: ['float32', () => ({ bytes: denseBytes })],
  'ort-q8': ['ort q8 (quantize_dynamic, per tensor)', ortFile('model_ort_q8.onnx')],
  'ort-q8-pc': ['ort q8 per channel', ortFile('model_ort_q8_pc.onnx')],
  'ort-q4': ['ort q4 (MatMulNBits g32, RTN; tables float32)', ortFile('model_ort_q4.onnx')],
  'ort-q4-al4': ['ort q4, accuracy_level 4', ortFile('model_ort_q4_al4.onnx')],
  'ort-q4-gather': ['ort q4 + GatherBlockQuantized tables (g32, float32 scales)', ortFile('model_ort_q4_gather.onnx')],
  int8: ['ours int8 GPTQ', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration, quantize: q('int8') })],
  'int4-rtn': ['ours int4 g32 RTN (tables 4-bit; float16 scales, as every int4 row of ours)', job({ mode: { kind: 'sparsity', sparsity: 0 }, quantize: q('int4', { method: 'rtn', int4MatMul: 'nbits' }) })],
  int4: ['ours int4 g32 GPTQ (tables 4-bit)', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration, quantize: q('int4', { int4MatMul: 'nbits' }) })],
  'int4-al4': ['ours int4 g32 GPTQ, accuracy_level 4', ['int4', 'al4']],
  'int4-f32': ['ours int4 g32 GPTQ, the same half-precision scales stored float32', ['int4', 'f32']],
  'int4-e8': ['ours int4 g32 GPTQ (tables int8)', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration, quantize: q('int4', { embeddings: 'int8', int4MatMul: 'nbits' }) })],
  'int4-g128': ['ours int4 g128 GPTQ (tables 4-bit g128)', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration, quantize: q('int4', { group: 128, int4MatMul: 'nbits' }) })],
  'sgpt30-int4': ['ours SparseGPT 30% + int4 g32 (joint)', job({ mode: { kind: 'sparsity', sparsity: 0.3 }, method: 'sparsegpt', calibration, quantize: q('int4', { int4MatMul: 'nbits' }) })],
  'sgpt50-int4': ['ours SparseGPT 50% + int4 g32 (joint)', job({ mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', calibration, quantize: q('int4', { int4MatMul: 'nbits' }) })],
  'nm24-int4': ['ours SparseGPT 2:4 + int4 g32 (joint)', job({ mode: { kind: 'nm', nm: [2, 4] }, method: 'sparsegpt', calibration, quantize: q('int4', { int4MatMul: 'nbits' }) })],
  // int4 MatMuls widened to the int8 MatMulInteger graph at load (quant/int4-dynamic.ts; the default for an encoder)
  'int4-dyn': ['ours int4 g32 GPTQ, widened to int8 at load (tables 4-bit)', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration, quantize: q('int4', { int4MatMul: 'dynamic' }) })],
  'int4-g128-dyn': ['ours int4 g128 GPTQ, widened to int8 at load (tables 4-bit g128)', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration, quantize: q('int4', { group: 128, int4MatMul: 'dynamic' }) })],
  'int4-g128-dyn-t3': ['ours int4 g128 GPTQ, widened at load; tables int3 g128', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration, quantize: q('int4', { group: 128, embeddings: 'int3', int4MatMul: 'dynamic' }) })],
  'int4-g128-dyn-t3-nss': ['ours int4 g128 GPTQ without the scale search, widened at load; tables int3 g128', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration: { ...calibration, scaleSearch: false }, quantize: q('int4', { group: 128, embeddings: 'int3', int4MatMul: 'dynamic' }) })],
  // the same with the token rows the tokenizer can never produce zeroed (PruneJob.tokenizer): outputs for any text unchanged
  'int4-g128-dyn-t3-vocab': ['ours int4 g128 GPTQ, widened at load; tables int3 g128; unreachable token rows zeroed', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration, tokenizer, quantize: q('int4', { group: 128, embeddings: 'int3', int4MatMul: 'dynamic' }) })],
  'int4-g128-dyn-t3-nss-vocab': ['ours int4 g128 GPTQ without the scale search, widened at load; tables int3 g128; unreachable token rows zeroed', job({ mode: { kind: 'sparsity', sparsity: 0 }, calibration: { ...calibration, scaleSearch: false }, tokenizer, quantize: q('int4', { group: 128, embeddings: 'int3', int4MatMul: 'dynamic' }) })],
  'int4-g128-dyn-t3-nss-vocab-pt': ['the same, one widened int8 scale per tensor (a probe)', ['int4-g128-dyn-t3-nss-vocab', 'pt']],
  'sgpt10-int4-g128-dyn-t3': ['ours SparseGPT 10% + int4 g128 (joint), widened at load; tables int3 g128', job({ mode: { kind: 'sparsity', sparsity: 0.1 }, method: 'sparsegpt', calibration, quantize: q('int4', { group: 128, embeddings: 'int3', int4MatMul: 'dynamic' }) })],
  'sgpt30-int4-g128-dyn-t3': ['ours SparseGPT 30% + int4 g128 (joint), widened at load; tables int3 g128', job({ mode: { kind: 'sparsity', sparsity: 0.3 }, method: 'sparsegpt', calibration, quantize: q('int4', { group: 128, embeddings: 'int3', int4MatMul: 'dynamic' }) })],
  'sgpt20-int4-g128-dyn-t3': ['ours SparseGPT 20% + int4 g128 (joint), widened at load; tables int3 g128', job({ mode: { kind: 'sparsity', sparsity: 0.2 }, method: 'sparsegpt', calibration, quantize: q('int4', { group: 128, embeddings: 'int3', int4MatMul: 'dynamic' }) })],
  'sgpt50-int8': ['ours SparseGPT 50% + int8 (joint)', job({ mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', calibration, quantize: q('int8') })],
};
const names = values.only ? values.only.split(',') : Object.keys(VARIANTS);
for (const n of names) {
  const channels = !VARIANTS[n] && channelVariant(n);
  if (channels) VARIANTS[n] = channels;
}
for (const n of names) if (n.startsWith('file:')) VARIANTS[n] = [`the file ${path.basename(n.slice(5))}`, () => ({ bytes: new Uint8Array(fs.readFileSync(n.slice(5))) })];
for (const n of ['ort-q8', 'float32']) if (!names.includes(n)) names.unshift(n); // the references of every ratio
const dir = path.join(path.dirname(values.out), 'minilm');
fs.mkdirSync(dir, { recursive: true });
const built = {};
for (const n of names) {
  const [label, build] = VARIANTS[n] ?? (() => { throw new Error(`unknown variant ${n} (${Object.keys(VARIANTS).join(', ')})`); })();
  const file = path.join(dir, `${n.replace(/[/:]/g, '_')}.onnx`);
  if (Array.isArray(build)) {
    const [from, how] = build;
    if (!built[from]) throw new Error(`${n} needs ${from} in the same run`);
    built[n] = { label, bytes: DERIVED[how](built[from].bytes) };
  } else if (values.reuse && fs.existsSync(file) && fs.existsSync(`${file}.json`)) {
    built[n] = { label, ...JSON.parse(fs.readFileSync(`${file}.json`, 'utf8')), bytes: new Uint8Array(fs.readFileSync(file)) };
  } else {
    const { bytes, ...info } = await build();
    built[n] = { label, ...info, bytes };
    if (!n.startsWith('ort') && !n.startsWith('file:') && n !== 'float32') {
      fs.writeFileSync(file, bytes);
      fs.writeFileSync(`${file}.json`, JSON.stringify(info));
    }
  }
  log(`${n}: ${(built[n].bytes.length / 2 ** 20).toFixed(2)} MiB${built[n].seconds ? ` in ${built[n].seconds.toFixed(0)} s` : ''}${built[n].forms ? ` ${JSON.stringify(built[n].forms)} gptq ${built[n].gptq}${built[n].zeroedRows !== undefined ? `, ${built[n].zeroedRows} token rows zeroed` : ""}` : ''}`);
}

// ---- fidelity and the task (onnxruntime-node, one thread)
const denseHeld = await runSet(runner, denseBytes, heldSet.samples);
const denseAcc = knnAccuracy(await runSet(runner, denseBytes, refSet.samples), denseHeld, ref, held, EMB);
log(`dense: kNN accuracy ${(100 * denseAcc).toFixed(2)}%`);
const brotli = (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;
const rows = [];
for (const n of names) {
  const b = built[n].bytes;
  const out = await runSet(runner, b, heldSet.samples);
  const f = fidelity(denseHeld, out, { inputs: heldSet.samples }).outputs.find((o) => o.name === EMB);
  const acc = knnAccuracy(await runSet(runner, b, refSet.samples), out, ref, held, EMB);
  const row = { name: n, label: built[n].label, raw: b.length, brotli: brotli(b), cosine: f.metrics.cosine, minCosine: f.metrics.minCosine, neighboursKept: f.metrics.neighboursKept, accuracy: acc, accuracyDelta: acc - denseAcc, seconds: built[n].seconds, forms: built[n].forms, gptq: built[n].gptq, ...(built[n].zeroedRows !== undefined ? { zeroedRows: built[n].zeroedRows } : {}) };
  rows.push(row);
  log(`${n}: brotli ${(row.brotli / 2 ** 20).toFixed(2)} MiB, cosine ${row.cosine.toFixed(4)} (min ${row.minCosine.toFixed(4)}), 10-NN kept ${(100 * row.neighboursKept).toFixed(1)}%, accuracy ${(100 * acc).toFixed(2)}%`);
}

// ---- latency: the first L held-out descriptions at their own length (no padding)
const L = Number(values['lat-sentences']), reps = Number(values.reps);
const lat = unpaddedFeeds(heldSet.samples.slice(0, L));
oneThreadWeb(ortWeb);
for (const [rt, ort] of [['node', ortNode], ['web', ortWeb]]) {
  const sess = [];
  for (const n of names) sess.push(await ort.InferenceSession.create(built[n].bytes, oneThreadOptions(rt)));
  const times = await interleavedLatency(sess, int64Feeds(ort, lat), { reps });
  for (const s of sess) await s.release?.();
  rows.forEach((row, i) => { row[`${rt}Ms`] = median(times[i]); row[`${rt}P90`] = quantile(sorted(times[i]), 0.9); });
  log(`${rt} latency measured`);
}

const refRow = rows.find((r) => r.name === 'ort-q8');
const MiB = (x) => (x / 2 ** 20).toFixed(2);
console.log(`\n| variant | raw MiB | brotli-9 MiB | ÷ ort q8 | cosine mean / min | 10-NN kept | kNN accuracy (Δ dense) | node ms (p90) | web WASM ms (p90) | web ÷ ort q8 |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
// --reps 0: no latency columns
const ms = (v) => (v === undefined ? '–' : v.toFixed(2));
for (const r of rows) {
  console.log(`| ${r.label} | ${MiB(r.raw)} | ${MiB(r.brotli)} | ${(r.brotli / refRow.brotli).toFixed(2)} | ${r.cosine.toFixed(4)} / ${r.minCosine.toFixed(4)} | ${(100 * r.neighboursKept).toFixed(1)}% | ${(100 * r.accuracy).toFixed(2)}% (${r.name === 'float32' ? '–' : (100 * r.accuracyDelta).toFixed(2)}) | ${ms(r.nodeMs)} (${ms(r.nodeP90)}) | ${ms(r.webMs)} (${ms(r.webP90)}) | ${r.webMs === undefined ? '–' : (r.webMs / refRow.webMs).toFixed(2)} |`);
}
const tokens = lat.map((f) => f.input_ids.length);
console.log(`\n${held.length} held-out descriptions (${sections.join(', ')}), ${ref.length} reference, ${calSet.samples.length} calibration; seq-len ${seqLen}; latency per description over the first ${L} (${Math.min(...tokens)}–${Math.max(...tokens)} tokens, unpadded), batch 1, one thread, median of ${reps} interleaved repetitions; load average at the end ${load()}; total ${((Date.now() - t0) / 60000).toFixed(1)} min.`);
for (const r of rows) if (r.seconds) console.log(`${r.name}: built in ${r.seconds.toFixed(0)} s; forms ${JSON.stringify(r.forms)}; gptq ${r.gptq ?? 'none'}`);
fs.writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), load: load(), sections, seqLen, denseAccuracy: denseAcc, reps, L, rows }, null, 1));
