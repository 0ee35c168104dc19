// Bench (issue 39): 4-bit SmolLM2-135M, ours against onnxruntime's own quantizers in the same run,
// judged by held-out perplexity and the bytes a browser downloads (file and brotli quality 9).
//   /work/venv/bin/python bench/quant/smollm2_ort.py        (onnxruntime's 4-bit and dynamic int8 files)
//   node bench/quant/smollm2.mjs [--model bench/out/smollm2] [--out bench/out/smollm2-quant]
//        [--seq-len 256] [--windows 8] [--calib-windows 32] [--only v1,v2] [--damp 0.1] [--table]
// Held-out: the first --windows windows of the GNU GPL v3 (/usr/share/common-licenses/GPL-3), as
// bench/text/lm-perplexity.mjs. Calibration: other licence texts (Apache-2.0, MPL-2.0, Artistic,
// GFDL-1.3, BSD, LGPL-2.1, MPL-1.1; none quotes the GPL v3), --calib-windows windows. Every variant
// runs in a child process of its own (the float model is 650 MB: one copy at a time), writes its
// file into --out and its figures into --out/results.json; the parent prints the table for
// bench/RESULTS.md (--table: only the table, from results.json).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const folder = opt('--model', 'bench/out/smollm2');
const outDir = opt('--out', 'bench/out/smollm2-quant');
const seqLen = Number(opt('--seq-len', 256)), windows = Number(opt('--windows', 8)), calibWindows = Number(opt('--calib-windows', 32));
const damp = opt('--damp', undefined);
const HELD = '/usr/share/common-licenses/GPL-3';
const CALIB = ['Apache-2.0', 'MPL-2.0', 'Artistic', 'GFDL-1.3', 'BSD', 'LGPL-2.1', 'MPL-1.1'].map((n) => `/usr/share/common-licenses/${n}`);

/** name → how the file is made: a file of onnxruntime's, or a job of ours. */
const VARIANTS = {
  dense: { label: 'dense float32', file: () => path.join(folder, 'onnx/model.onnx') },
  'ort-q8': { label: "onnxruntime quantize_dynamic int8 (per tensor; transformers.js' q8)", file: () => path.join(outDir, 'ort_q8.onnx') },
  'ort-q4': { label: 'onnxruntime MatMulNBits 4-bit, block 32, symmetric RTN (embedding float32)', file: () => path.join(outDir, 'ort_q4.onnx') },
  'rtn-int4': { label: 'ours int4 g32, round-to-nearest (embedding 4-bit per row)', job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32 } } },
  'gptq-int4': { label: 'ours int4 g32, GPTQ (sequential), natural order, embedding 4-bit RTN', calib: { actOrder: false, scaleSearch: false }, job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32 } } },
  'gptq-int4-ao': { label: 'ours int4 g32, GPTQ act-order + static groups, embedding 4-bit RTN', calib: { actOrder: true, scaleSearch: false }, job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32 } } },
  'gptq-int4-ao-mse': { label: 'ours int4 g32, GPTQ act-order + static groups + scale search, embedding 4-bit RTN', calib: { actOrder: true, scaleSearch: true }, job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32 } } },
  'gptq-int4-mse': { label: 'ours int4 g32, GPTQ natural order + scale search, embedding 4-bit RTN', calib: { actOrder: false, scaleSearch: true }, job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32 } } },
  'rtn-int4-dyn': { label: 'ours int4 g32, round-to-nearest, MatMuls widened to the int8 MatMulInteger graph at load (int4MatMul dynamic)', job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32, int4MatMul: 'dynamic' } } },
  'rtn-int4-e8': { label: 'ours int4 g32, round-to-nearest, embedding int8 per row', job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32, embeddings: 'int8' } } },
  'gptq-int4-e8': { label: 'ours int4 g32, GPTQ, embedding int8 per row', calib: true, job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32, embeddings: 'int8' } } },
  'sgpt50-int4': { label: 'ours 50% SparseGPT + int4 g32, joint (one factorisation)', calib: true, job: { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', quantize: { scheme: 'int4', group: 32 } } },
  'sgpt50-int4-mse': { label: 'ours 50% SparseGPT + int4 g32, joint, scale search per group', calib: { scaleSearch: true }, job: { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', quantize: { scheme: 'int4', group: 32 } } },
  // Two passes: SparseGPT's pruning, then a GPTQ pass of its own over the pruned model (its zeros
  // kept as the mask; act-order, static groups and the scale search, the GPTQ pass's defaults).
  'sgpt50-then-int4': { label: 'ours 50% SparseGPT, then int4 g32 by GPTQ (act-order + scale search) keeping the zeros', calib: true, first: { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt' }, job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32 } } },
  'gptq-int4-head8': { label: 'ours int4 g32, GPTQ (act-order + scale search, the defaults), the head int8 per channel', calib: true, job: { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', group: 32, keptDense: 'int8' } } },
  'sgpt50-int4-head8': { label: 'ours 50% SparseGPT + int4 g32, joint, the head (kept dense) int8 per channel', calib: true, job: { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', quantize: { scheme: 'int4', group: 32, keptDense: 'int8' } } },
  'nm24-int4': { label: 'ours 2:4 SparseGPT + int4 g32, joint', calib: true, job: { mode: { kind: 'nm', nm: [2, 4] }, method: 'sparsegpt', quantize: { scheme: 'int4', group: 32 } } },
};

const BROTLI_MAX = 400 * 2 ** 20;
const brotli = (bytes) => zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }).length;

async function child(name) {
  const v = VARIANTS[name];
  const ort = (await import('onnxruntime-node')).default;
  const O = await import('#onnx-internal');
  const tokenizer = JSON.parse(fs.readFileSync(path.join(folder, 'tokenizer.json'), 'utf8'));
  const source = path.join(folder, 'onnx/model.onnx');
  let file = v.file?.();
  const r = { name, label: v.label };
  if (v.job) {
    const model = await O.loadOnnx(source);
    const job = structuredClone(v.job);
    if (v.calib) {
      const text = CALIB.filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f, 'utf8')).join('\n\n');
      const set = O.textSamples({ text, tokenizer, seqLen, inputs: model.inputs, outputs: model.outputs, limit: calibWindows });
      // `calib`: true (the job's defaults) or the GPTQ options a variant pins (act-order, scale search).
      job.calibration = { samples: set.samples, ...(v.calib === true ? {} : v.calib), ...(damp === undefined ? {} : { percDamp: Number(damp) }) };
      r.calibration = `${set.samples.length} windows x ${seqLen} tokens`;
      r.percDamp = job.calibration.percDamp ?? 'job default';
      if (v.calib !== true) r.gptqOptions = v.calib;
    }
    const t0 = performance.now();
    // Where the job is, in --out/NAME.progress (the children's output is only read at their end).
    let last = 0;
    const onProgress = (p) => {
      if (performance.now() - last < 5000) return;
      last = performance.now();
      fs.writeFileSync(path.join(outDir, `${name}.progress`), `${((last - t0) / 1000).toFixed(0)} s: ${p.phase} ${p.done}/${p.total} ${p.label ?? ''}\n`);
    };
    const env = { ort, sessionOptions: { intraOpNumThreads: 2, logSeverityLevel: 3 }, onProgress };
    // `first`: a job run before the variant's own, on the same model and calibration.
    if (v.first) await O.runJob(model, { ...structuredClone(v.first), calibration: job.calibration }, env);
    const { report } = await O.runJob(model, job, env);
    r.jobSeconds = (performance.now() - t0) / 1000;
    r.gptq = report.quantize.gptq;
    const emb = report.quantize.layers.filter((l) => l.op === 'Gather');
    r.embeddingBytes = emb.reduce((a, l) => a + l.bytesAfter, 0);
    r.zeros = report.quantize.layers.reduce((a, l) => a + l.zeros, 0);
    r.relError = (() => { const e = report.quantize.layers.map((l) => l.relError).filter((x) => typeof x === 'number'); return e.length ? e.reduce((a, x) => a + x, 0) / e.length : null; })();
    file = path.join(outDir, `${name}.onnx`);
    fs.writeFileSync(file, model.encode());
  }
  const bytes = fs.readFileSync(file);
  r.bytes = bytes.length;
  // Brotli 9 ran at about 0.4 MB/s on the shared machine: the 650 MB float file (about 27 minutes)
  // is left out; the quantized files are all measured.
  if (bytes.length < BROTLI_MAX) {
    const t1 = performance.now();
    r.brotli = brotli(bytes);
    r.brotliSeconds = (performance.now() - t1) / 1000;
  }
  const m = O.OnnxModel.parse(bytes);
  const held = O.textSamples({ text: fs.readFileSync(HELD, 'utf8'), tokenizer, seqLen, inputs: m.inputs, outputs: m.outputs, limit: windows });
  const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 2, logSeverityLevel: 3 });
  const t2 = performance.now();
  const out = await O.runSet(runner, bytes, held.samples);
  r.runSeconds = (performance.now() - t2) / 1000;
  const f = O.fidelity(out, out, { inputs: held.samples, vocabSize: held.vocabSize }).outputs[0].metrics;
  r.perplexity = f.perplexityOriginal;
  r.tokens = f.predictedTokens;
  process.stdout.write(`RESULT ${JSON.stringify(r)}\n`);
}

function parent() {
  fs.mkdirSync(outDir, { recursive: true });
  const only = args.includes('--table') ? [] : opt('--only', Object.keys(VARIANTS).join(',')).split(',');
  const resultsFile = path.join(outDir, 'results.json');
  const results = fs.existsSync(resultsFile) ? JSON.parse(fs.readFileSync(resultsFile, 'utf8')) : {};
  for (const name of only) {
    if (!VARIANTS[name]) throw new Error(`unknown variant ${name}`);
    const t = performance.now();
    const c = spawnSync(process.execPath, ['--max-old-space-size=12000', fileURLToPath(import.meta.url), ...args, '--variant', name], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const line = c.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    if (!line) { console.error(`${name} failed (${c.status}):\n${c.stderr.slice(-3000)}`); continue; }
    results[name] = JSON.parse(line.slice(7));
    fs.writeFileSync(resultsFile, JSON.stringify(results, null, 1));
    console.error(`${name}: ${((performance.now() - t) / 1000).toFixed(0)} s`);
  }
  const mib = (b) => (b === undefined ? '—' : (b / 2 ** 20).toFixed(1));
  const q4 = results['ort-q4'], dense = results.dense;
  console.log('| variant | file MiB | brotli-9 MiB | vs ort 4-bit brotli | perplexity | gap closed |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [name, r] of Object.entries(results)) {
    const gap = q4 && dense && name !== 'dense' && name !== 'ort-q4' ? `${(100 * (q4.perplexity - r.perplexity) / (q4.perplexity - dense.perplexity)).toFixed(0)}%` : '';
    console.log(`| ${r.label} | ${mib(r.bytes)} | ${mib(r.brotli)} | ${q4 && r.brotli ? (r.brotli / q4.brotli).toFixed(2) + 'x' : ''} | ${r.perplexity.toFixed(2)} | ${gap} |`);
  }
}

const vi = args.indexOf('--variant');
if (vi >= 0) await child(args[vi + 1]);
else parent();
