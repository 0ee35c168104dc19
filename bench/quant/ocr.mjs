// Bench (issue 39): the PaddleOCR detector and recogniser quantized, ours through runJob (the path the
// CLI's `prune --quantize` takes) against onnxruntime's own quantizers (bench/quant/ocr_ort.py) in the
// same run, judged by the bytes a browser downloads (brotli quality 9 of the .onnx) and the task on
// held-out rendered text (kit/ocr-text.mjs, kit/ocr-metrics.mjs):
//   det: F1 of the boxes against the ORIGINAL model's boxes (issue 39's target) and against the truth;
//   rec: CER against the truth (the target: within 1 point) and against the original's reading.
// Latency: onnxruntime-node and onnxruntime-web (WASM), one thread, every variant once per repetition
// in rotating order (interleaved), after a warm-up.
//   node bench/quant/ocr.mjs [--models det,rec] [--pages 16] [--lines 64] [--calib 16] [--reps 5]
//        [--lat 2] [--channels 0.1] [--only v1,v2] [--out bench/out/quant-ocr] [--table]
// Calibration: rendered pages / lines of seed 1 (ocr-quality.mjs' calibration seed), at the generated
// inputs' size; held-out: seed 900, natural size. Disjoint plans (kit/ocr-text.mjs draws text per seed).
// Needs the built package, Chromium for the first rendering, and /work/venv/bin/python for onnxruntime's files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { OnnxModel, runJob, makeOrtRunner, readCalibrationDir, quantizeModel } from 'sparsekit-wasm/onnx';
import { rtnQuantize, positiveScales, plannedGrids, calibratePrune } from '#onnx-internal';
import { renderSets } from '../../kit/ocr-text.mjs';
import { readTextSet, textSamples, detBoxes, matchBoxes, ctcDecode, editDistance, recMetrics, detMetrics } from '../../kit/ocr-metrics.mjs';
import { ROOT, DET, REC } from '../../kit/ocr-models.mjs';
import { median, quantile, sorted } from '../lib/stats.mjs';

const { values: opt } = parseArgs({ options: {
  models: { type: 'string', default: 'det,rec' }, pages: { type: 'string', default: '16' }, lines: { type: 'string', default: '64' },
  calib: { type: 'string', default: '16' }, reps: { type: 'string', default: '5' }, lat: { type: 'string', default: '2' },
  channels: { type: 'string', default: '0.1' }, only: { type: 'string' }, out: { type: 'string', default: 'bench/out/quant-ocr' },
  python: { type: 'string', default: '/work/venv/bin/python' }, table: { type: 'boolean', default: false },
} });
const OUT = path.resolve(opt.out);
const CALIB = Number(opt.calib), REPS = Number(opt.reps), LAT = Number(opt.lat), FRACTION = Number(opt.channels);
const SETS = {
  det: { file: DET, kind: 'pages', count: Number(opt.pages), fit: [320, 320] },
  rec: { file: REC, kind: 'lines', count: Number(opt.lines), fit: [48, 192] },
};
const t00 = Date.now();
const log = (m) => console.error(`[${((Date.now() - t00) / 1000).toFixed(0)} s] ${m}`);
fs.mkdirSync(OUT, { recursive: true });
const brotli = (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;
// --table: only the tables, from OUT/results.json and the files of a run before.
if (opt.table) { printTables(JSON.parse(fs.readFileSync(path.join(OUT, 'results.json'), 'utf8'))); process.exit(0); }

const int8 = (method) => ({ scheme: 'int8', method });
/** The variants per model: ours as PruneJobs (calib: the job gets the calibration samples), onnxruntime's as files. */
function variants(key) {
  const dense = { kind: 'sparsity', sparsity: 0 };
  const v = {
    float32: { label: 'float32 (original)' },
    'ort-q8': { label: 'onnxruntime quantize_dynamic int8 (per tensor)', ort: `${key}_ort_q8.onnx` },
    'ort-qdq': { label: 'onnxruntime quantize_static QDQ int8 (per channel, MinMax)', ort: `${key}_ort_qdq.onnx` },
    'int8-rtn': { label: 'ours int8, round-to-nearest', job: { mode: dense, quantize: int8('rtn') } },
    'int8-gptq': { label: 'ours int8, GPTQ', calib: true, job: { mode: dense, quantize: int8('gptq') } },
    'sgpt50-int8': { label: 'ours 50% SparseGPT + int8 (joint)', calib: true, job: { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', quantize: int8('gptq') } },
    'nm24-int8': { label: 'ours 2:4 SparseGPT + int8 (joint)', calib: true, job: { mode: { kind: 'nm', nm: [2, 4] }, method: 'sparsegpt', quantize: int8('gptq') } },
  };
  if (key === 'det') {
    // The tool's int4 on this all-Conv model: 4-bit codes per output channel in the int8 container
    // (the int4-dq form), GPTQ alone or joint with SparseGPT: what the probes below showed first.
    v['int4-gptq'] = { label: 'ours int4 (Conv: 4-bit per channel, int8 container), GPTQ', calib: true, job: { mode: dense, quantize: { scheme: 'int4', method: 'gptq' } } };
    v['sgpt50-int4'] = { label: 'ours 50% SparseGPT + int4 (joint)', calib: true, job: { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', quantize: { scheme: 'int4', method: 'gptq' } } };
    v['nm24-int4'] = { label: 'ours 2:4 SparseGPT + int4 (joint)', calib: true, job: { mode: { kind: 'nm', nm: [2, 4] }, method: 'sparsegpt', quantize: { scheme: 'int4', method: 'gptq' } } };
    // Bench-only probes that came before the tool's int4-dq form (then int4 was MatMul only):
    // 16-level codes written in the int8 form, so brotli sees 4-bit entropy in 8-bit containers.
    v['int4c-rtn'] = { label: 'probe: 4-bit grid per channel in int8 containers, RTN', probe: true };
    v['sgpt50-int4c'] = { label: 'probe: 50% SparseGPT, then 4-bit grid per channel in int8 containers, RTN', probe: true, calib: true,
      job: { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt' } };
    // The same probes compensated: GPTQ on the 4-bit per-channel grid (calibratePrune with grids,
    // the pass runJob makes for int8), alone (percDamp 0.01, GPTQ's) or joint with SparseGPT 50% (0.1).
    v['int4c-gptq'] = { label: 'probe: 4-bit grid per channel in int8 containers, GPTQ', probe: true, gptq4: { percDamp: 0.01 } };
    for (const sp of [0.3, 0.4, 0.5]) {
      v[`sgpt${100 * sp}-int4c-gptq`] = { label: `probe: ${100 * sp}% SparseGPT + 4-bit grid per channel in int8 containers, joint`, probe: true, gptq4: { percDamp: 0.1, criterion: 'sparsegpt', sparsity: sp } };
    }
    // The GPTQ probe's codes packed as int4 with opset-21 DequantizeLinear (ocr_int4dq.py): same values.
    v['int4c-gptq-dq21'] = { label: 'probe: the GPTQ 4-bit codes packed as int4, opset-21 DequantizeLinear', from: 'int4c-gptq' };
    v['nm24-int4c-gptq'] = { label: 'probe: 2:4 SparseGPT + 4-bit grid per channel in int8 containers, joint', probe: true, gptq4: { percDamp: 0.1, criterion: 'sparsegpt', nm: [2, 4] } };
    v[`ch${FRACTION}-int8`] = { label: `ours --channels ${FRACTION} global (SparseGPT) + int8 GPTQ`, calib: true,
      job: { mode: { kind: 'channels', fraction: FRACTION, scope: 'global' }, method: 'sparsegpt', quantize: int8('gptq') } };
  }
  if (key === 'rec') {
    v['int4all-gptq'] = { label: 'probe: int4 g32 MatMulNBits + 4-bit grid per channel Conv in int8 containers, GPTQ', probe: true, gptq4: { percDamp: 0.01, scheme: 'int4' } };
  }
  if (key === 'rec') v['int4-gptq'] = { label: 'ours int4 (MatMul: g32 MatMulNBits; Conv: 4-bit per channel, int8 container), GPTQ', calib: true, job: { mode: dense, quantize: { scheme: 'int4', group: 32, method: 'gptq' } } };
  if (!opt.only) return v;
  const keep = new Set(['float32', ...opt.only.split(',')]);
  return Object.fromEntries(Object.entries(v).filter(([k]) => keep.has(k)));
}

/**
 * The probe's quantizer: onnxruntime's 16-level 4-bit grid per output channel (rtnQuantize), its
 * negative scales turned positive with the codes negated (codes -8..8), which the int8 form stores
 * (positiveScales: the container of the tool's int4-dq form).
 */
function int4InInt8(values, rows, cols) {
  return positiveScales(rtnQuantize(values, rows, cols, { bits: 4, group: 0 }));
}

/** A .npy (v1.0, little-endian float32, C order) of one feed, for onnxruntime's static calibration reader. */
function writeNpy(file, t) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${t.dims.join(', ')},), }`;
  header += ' '.repeat(63 - ((header.length + 10) % 64)) + '\n';
  const h = Buffer.alloc(10);
  h.write('\x93NUMPY', 0, 'latin1'); h[6] = 1; h[7] = 0; h.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([h, Buffer.from(header, 'latin1'), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]));
}

const runner = makeOrtRunner(ortNode, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });

// Rendered sets first (one browser for all), then onnxruntime's files from the calibration feeds.
const sets = await renderSets(opt.models.split(','), SETS, CALIB);

/** Outputs of `bytes` on the held-out samples (onnxruntime-node, one thread). */
async function outputsOf(bytes, samples) {
  const s = await runner.createSession(bytes);
  try {
    const outs = [];
    for (const { feeds } of samples) outs.push(Object.values(await s.run(feeds))[0].data);
    return outs;
  } finally { await s.release?.(); }
}

/** The task figures of outputs `outs` against the truth and against the original's outputs `ref`. */
function taskOf(key, set, samples, outs, ref) {
  const wrap = outs.map((o) => ({ y: o }));
  if (key === 'det') {
    const truth = detMetrics(set, wrap, samples);
    let tp = 0, np = 0, nt = 0;
    samples.forEach((s, i) => {
      const [, , h, w] = s.feeds.x.dims;
      const pred = detBoxes(outs[i], h, w), orig = detBoxes(ref[i], h, w);
      tp += matchBoxes(pred, orig); np += pred.length; nt += orig.length;
    });
    const p = np ? tp / np : 0, r = nt ? tp / nt : 0;
    return { f1Orig: p + r > 0 ? (2 * p * r) / (p + r) : 0, pOrig: p, rOrig: r, boxesOrig: nt, f1Truth: truth.f1 };
  }
  const truth = recMetrics(set, wrap);
  let dist = 0, len = 0;
  outs.forEach((o, i) => { const a = ctcDecode(ref[i], 6625).trim(), b = ctcDecode(o, 6625).trim(); dist += editDistance(b, a); len += [...a].length; });
  return { cerTruth: truth.cer, lineAcc: truth.lineAcc, cerOrig: dist / len };
}

const results = {};
for (const key of opt.models.split(',')) {
  const floatBytes = new Uint8Array(fs.readFileSync(SETS[key].file));
  const base = OnnxModel.parse(floatBytes);
  const set = readTextSet(sets[key].evalDir);
  const samples = textSamples(set, key);
  const calibration = await readCalibrationDir(sets[key].calibDir, base, { limit: CALIB });
  const V = variants(key);
  // onnxruntime's side: its .npy calibration feeds, then its script (skipped when its files exist).
  const npyDir = path.join(OUT, `calib-${key}`);
  fs.mkdirSync(npyDir, { recursive: true });
  calibration.forEach((s, i) => writeNpy(path.join(npyDir, `${String(i).padStart(3, '0')}.npy`), s.feeds.x));
  if (Object.values(V).some((v) => v.ort && !fs.existsSync(path.join(OUT, v.ort)))) {
    const r = spawnSync('nice', ['-n', '10', opt.python, path.join(ROOT, 'bench/quant/ocr_ort.py'), '--model', SETS[key].file, '--out', OUT, '--name', key, '--calib', npyDir], { encoding: 'utf8', cwd: OUT }); // cwd: quant_pre_process leaves a temp file there
    log(`ocr_ort.py ${key}: ${r.stdout.trim().replace(/\n/g, '; ')}${r.status ? ` FAILED ${r.stderr.slice(-400)}` : ''}`);
  }
  const files = {}, rows = {};
  for (const [name, v] of Object.entries(V)) {
    const row = rows[name] = { name, label: v.label };
    try {
      if (v.ort) files[name] = new Uint8Array(fs.readFileSync(path.join(OUT, v.ort)));
      else if (v.from) {
        const [src, dst] = [`${key}_${v.from}.onnx`, `${key}_${name}.onnx`].map((f) => path.join(OUT, f));
        const r = spawnSync('nice', ['-n', '10', opt.python, path.join(ROOT, 'bench/quant/ocr_int4dq.py'), src, dst], { encoding: 'utf8' });
        if (r.status) throw new Error(`ocr_int4dq.py: ${r.stderr.slice(-300)}`);
        files[name] = new Uint8Array(fs.readFileSync(dst));
      }
      else if (!v.job && !v.probe) files[name] = floatBytes;
      else {
        const model = OnnxModel.parse(floatBytes);
        const t0 = performance.now();
        let report = null;
        if (v.job) {
          const job = structuredClone(v.job);
          if (v.calib) job.calibration = { samples: calibration };
          ({ report } = await runJob(model, job, { ort: ortNode, sessionOptions: { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 } }));
        }
        let given;
        if (v.gptq4) {
          // scheme int4: MatMul weights on the tool's own int4 grid (MatMulNBits, group 32), the rest 4-bit per channel.
          const { percDamp, scheme = 'int8', ...target } = v.gptq4;
          const planned = plannedGrids(model, { scheme, ...(scheme === 'int4' ? { group: 32 } : {}) });
          const grids = new Map([...planned].map(([n, g]) => [n, g.bits === 4 ? g : { bits: 4, group: 0 }]));
          const r = await calibratePrune(model, { ort: runner, calibration, percDamp, sequential: true, quantize: { grids }, ...target });
          given = new Map([...r.quantized].map(([n, g]) => [n, planned.get(n)?.bits === 4 ? g : { ...g, qv: positiveScales(g.qv) }]));
        }
        const qopts = v.gptq4?.scheme === 'int4' ? { scheme: 'int4', group: 32 } : { scheme: 'int8' };
        const q = v.probe ? quantizeModel(model, { ...qopts, ...(given ? { given } : { quantizer: int4InInt8 }) }) : report.quantize;
        row.jobSeconds = (performance.now() - t0) / 1000;
        files[name] = model.encode();
        const forms = {};
        for (const l of q.layers) forms[`${l.op}:${l.form}`] = (forms[`${l.op}:${l.form}`] ?? 0) + 1;
        row.forms = forms;
        row.gptq = q.gptq ?? null;
        // Where the bytes are: the quantized weights (codes + scales + zero points), the float
        // layers the quantizer left, and everything else in the file (graph, other initializers).
        row.weightBytes = q.layers.reduce((a, l) => a + l.bytesAfter, 0);
        row.floatLayers = q.layers.filter((l) => l.form === 'float').map((l) => `${l.name} (${l.op}, ${l.bytesAfter} B${l.note ? `: ${l.note}` : ''})`);
        row.zeros = q.layers.reduce((a, l) => a + l.zeros, 0) / q.layers.reduce((a, l) => a + l.params, 0);
        row.params = report?.prune?.params ?? null;
        fs.writeFileSync(path.join(OUT, `${key}_${name}.onnx`), files[name]);
      }
      row.raw = files[name].length;
      row.brotli = brotli(files[name]);
      log(`${key} ${name}: built, ${(row.raw / 2 ** 20).toFixed(2)} MiB, brotli ${(row.brotli / 2 ** 20).toFixed(3)} MiB${row.jobSeconds ? `, job ${row.jobSeconds.toFixed(1)} s` : ''}`);
    } catch (e) {
      row.error = `${e.code ?? ''} ${e.message}`.trim().slice(0, 300);
      log(`${key} ${name}: ${row.error}`);
      delete files[name];
    }
  }
  // Task figures on every held-out sample (onnxruntime-node).
  const ref = await outputsOf(floatBytes, samples);
  for (const name of Object.keys(files)) {
    try { Object.assign(rows[name], taskOf(key, set, samples, name === 'float32' ? ref : await outputsOf(files[name], samples), ref)); } catch (e) {
      rows[name].error = `run: ${e.message}`.slice(0, 300); delete files[name];
    }
  }
  log(`${key}: task figures done`);
  // Latency, interleaved: the first LAT held-out samples per variant per repetition, order rotating.
  ortWeb.env.wasm.numThreads = 1;
  ortWeb.env.logLevel = 'error';
  for (const [rt, ort] of [['node', ortNode], ['web', ortWeb]]) {
    const sessions = {};
    for (const name of Object.keys(files)) {
      try {
        sessions[name] = await ort.InferenceSession.create(files[name], rt === 'node' ? { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 } : { executionProviders: ['wasm'], logSeverityLevel: 3 });
      } catch (e) { rows[name][`${rt}Error`] = e.message.slice(0, 200); }
    }
    const feeds = samples.slice(0, LAT).map((s) => ({ x: new ort.Tensor('float32', s.feeds.x.data, s.feeds.x.dims) }));
    const keys = Object.keys(sessions);
    const lat = Object.fromEntries(keys.map((k) => [k, []]));
    for (const k of keys) for (const f of feeds) await sessions[k].run(f);
    for (let r = 0; r < REPS; r++) {
      for (let j = 0; j < keys.length; j++) {
        const k = keys[(r + j) % keys.length];
        const t = performance.now();
        for (const f of feeds) await sessions[k].run(f);
        lat[k].push((performance.now() - t) / feeds.length);
      }
    }
    for (const k of keys) { rows[k][`${rt}Ms`] = median(lat[k]); rows[k][`${rt}P90`] = quantile(sorted(lat[k]), 0.9); await sessions[k].release?.(); }
    log(`${key}: ${rt} latency done`);
  }
  results[key] = { rows: Object.values(rows), samples: samples.length, latShape: samples[0].feeds.x.dims };
}

const saved = { date: new Date().toISOString(), load: os.loadavg().map((l) => l.toFixed(2)).join(' '), minutes: (Date.now() - t00) / 60000, calib: CALIB, reps: REPS, lat: LAT, results };
fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify(saved, null, 1));
printTables(saved);

/**
 * Served bytes split (det and rec files of ours): brotli of the file against brotli of the same file
 * with every int8 code tensor zeroed (zeros cost brotli next to nothing), so the difference is what
 * the codes cost and the rest what the scales, the float layers left and the graph cost.
 */
function servedSplit(file) {
  const m = OnnxModel.parse(new Uint8Array(fs.readFileSync(file)));
  let codes = 0;
  for (const t of m.graph.initializer) {
    if (t.data_type !== 3 || !t.raw_data?.length || t.raw_data.length < 64) continue; // INT8 codes (not zero points)
    codes += t.raw_data.length;
    t.raw_data = new Uint8Array(t.raw_data.length);
  }
  return { codes, rest: brotli(m.encode()) };
}

function printTables({ load, minutes, reps, lat: latN, results: res }) {
  const MiB = (n) => (n / 2 ** 20).toFixed(3);
  const ms = (r, rt) => (r[`${rt}Ms`] === undefined ? (r[`${rt}Error`] ? 'fails' : '–') : `${r[`${rt}Ms`].toFixed(0)} (${r[`${rt}P90`].toFixed(0)})`);
  for (const [key, { rows, samples, latShape }] of Object.entries(res)) {
    const f32 = rows.find((r) => r.name === 'float32'), q8 = rows.find((r) => r.name === 'ort-q8');
    const task = key === 'det' ? 'F1 vs original (P / R) | F1 vs truth' : 'CER vs truth | lines exact | CER vs original';
    console.log(`\n### ${key} (${samples} held-out ${key === 'det' ? 'pages' : 'lines'})\n`);
    console.log(`| variant | raw MiB | brotli-9 MiB | float32 ÷ this (brotli) | ÷ ort q8 (brotli) | ${task} | node ms (p90) | web WASM ms (p90) | web ÷ ort q8 |`);
    console.log(`|---|---:|---:|---:|---:|${key === 'det' ? '---:|---:' : '---:|---:|---:'}|---:|---:|---:|`);
    for (const r of rows) {
      if (r.error && r.brotli === undefined) { console.log(`| ${r.label} | error: ${r.error} |`); continue; }
      const t = r.error ? `error: ${r.error}` : key === 'det' ? `${r.f1Orig.toFixed(3)} (${r.pOrig.toFixed(3)} / ${r.rOrig.toFixed(3)}) | ${r.f1Truth.toFixed(3)}`
        : `${(100 * r.cerTruth).toFixed(2)}% | ${(100 * r.lineAcc).toFixed(0)}% | ${(100 * r.cerOrig).toFixed(2)}%`;
      const webRatio = r.webMs !== undefined && q8?.webMs !== undefined ? (r.webMs / q8.webMs).toFixed(2) : '–';
      console.log(`| ${r.label} | ${MiB(r.raw)} | ${MiB(r.brotli)} | ${(f32.brotli / r.brotli).toFixed(2)} | ${q8?.brotli ? (r.brotli / q8.brotli).toFixed(2) : '–'} | ${t} | ${ms(r, 'node')} | ${ms(r, 'web')} | ${webRatio} |`);
    }
    console.log(`\nLatency: ms per ${latShape.slice(2).join('×')} input (first ${latN} held-out), one thread, median of ${reps} interleaved repetitions.\n`);
    for (const r of rows) {
      if (r.name.startsWith('ort-') && r.brotli !== undefined) {
        const split = servedSplit(path.join(OUT, `${key}_${r.name.replace('-', '_')}.onnx`));
        console.log(`- ${r.name}: served: codes ${MiB(r.brotli - split.rest)} MiB (${((8 * (r.brotli - split.rest)) / (split.codes || 1)).toFixed(2)} bits per code), the rest ${MiB(split.rest)} MiB`);
      }
      if (!r.forms) continue;
      const file = path.join(OUT, `${key}_${r.name}.onnx`);
      const split = fs.existsSync(file) ? servedSplit(file) : null;
      const served = split ? `; served: codes ${MiB(r.brotli - split.rest)} MiB (${((8 * (r.brotli - split.rest)) / (split.codes || 1)).toFixed(2)} bits per code), the rest (scales, float layers, graph) ${MiB(split.rest)} MiB` : '';
      const floats = r.floatLayers.length ? `; left float: ${r.floatLayers.map((x) => x.replace(/: .*\)$/, ')')).join(', ')}` : '';
      console.log(`- ${r.name}: layers ${JSON.stringify(r.forms)}; quantized-weight bytes ${MiB(r.weightBytes)} MiB of the ${MiB(r.raw)} MiB file; zeros ${(100 * r.zeros).toFixed(0)}%${r.gptq ? `; GPTQ ${r.gptq.pass} ${r.gptq.layers} layers` : ''}; job ${r.jobSeconds.toFixed(1)} s${served}${floats}`);
    }
  }
  console.log(`\nLoad average at the end: ${load}${minutes ? `; ${minutes.toFixed(1)} min` : ''}.`);
}
