// Bench: SparseGPT 50% and 2:4 on MiniLM-L6 (all-MiniLM-L6-v2, a transformers.js folder made by
// bench/models/minilm.py) with and without SparseGPT's refit (calibration.refit 0 / the default),
// judged by the package's 'embedding' fidelity (cosine per sentence, 10-nearest neighbours kept) on
// held-out lines: one `runJob` per row, the path the CLI takes.
//   node bench/text/minilm-refit.mjs [--model /work/models/all-MiniLM-L6-v2] [--calib FILE.txt]
//        [--eval FILE.txt] [--calib-count 256] [--eval-count 256] [--seq-len 64] [--runs 0.5,2:4] [--refits 0,16]
// Text: one sample per non-empty line (encoder), calibration and held-out from different files; by
// default the machine's GPL-3 and Apache-2.0 licence texts (copied to a .txt file: the reader takes
// .txt / .jsonl). Needs the folder first: /work/venv/bin/python bench/models/minilm.py --out DIR.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { loadOnnx, runJob, readTextSamples } from 'sparsekit-wasm/onnx';

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const folder = opt('--model', '/work/models/all-MiniLM-L6-v2');
const file = path.join(folder, 'onnx/model.onnx');
const tokenizer = path.join(folder, 'tokenizer.json');
const seqLen = Number(opt('--seq-len', 64));
const asTxt = (f) => { const t = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'minilm-refit-')), `${path.basename(f)}.txt`); fs.copyFileSync(f, t); return t; };
const calibFile = opt('--calib') ?? asTxt('/usr/share/common-licenses/GPL-3');
const evalFile = opt('--eval') ?? asTxt('/usr/share/common-licenses/Apache-2.0');
const model0 = await loadOnnx(file);
const io = { tokenizer, seqLen, inputs: model0.inputs, outputs: model0.outputs };
const calib = (await readTextSamples(calibFile, { ...io, limit: Number(opt('--calib-count', 256)) })).samples;
const held = (await readTextSamples(evalFile, { ...io, limit: Number(opt('--eval-count', 256)) })).samples;
console.log(`MiniLM: ${calib.length} calibration lines (${path.basename(calibFile)}), ${held.length} held-out (${path.basename(evalFile)}), ${seqLen} tokens`);
for (const run of opt('--runs', '0.5,2:4').split(',')) {
  for (const refit of opt('--refits', '0,16').split(',').map(Number)) {
    const model = await loadOnnx(file);
    const mode = run.includes(':') ? { kind: 'nm', nm: run.split(':').map(Number) } : { kind: 'sparsity', sparsity: Number(run) };
    const t0 = performance.now();
    const { report } = await runJob(model, { mode, method: 'sparsegpt', calibration: { samples: calib, refit }, eval: { samples: held } }, { ort, sessionOptions: { logSeverityLevel: 3 } });
    const m = report.fidelity.outputs.find((o) => o.name === 'sentence_embedding')?.metrics ?? report.fidelity.outputs[0].metrics;
    console.log(`${run}, refit ${refit}: cosine ${m.cosine.toFixed(4)} (min ${m.minCosine.toFixed(4)}), ${(100 * m.neighboursKept).toFixed(1)}% of 10-NN kept, ${Math.round((performance.now() - t0) / 1000)} s`);
  }
}
