// Bench: the token ids of a language model's calibration and held-out windows, cut by the package's
// own text sampling, written to JSON for the reference pruning code in Python
// (bench/calib/reference_lm.py), so that both sides calibrate on the same windows in the same order.
// The calibration windows go through readTextSamples, the function the CLI's `--calib FILE.txt
// --calib-count N --seq-len L` calls; the held-out windows through textSamples, as
// bench/text/lm-table.mjs cuts them (the GPL v3 file has no .txt extension).
//   node bench/calib/lm-windows.mjs [--model bench/out/smollm2] [--calib /work/tmp/RELNOTES.txt]
//        [--calib-count 128] [--seq-len 512] [--eval /usr/share/common-licenses/GPL-3]
//        [--eval-count 16] [--eval-seq-len 256] [--out bench/out/lm-windows.json]
import fs from 'node:fs';
import path from 'node:path';
import { loadOnnx, resolveTextModel, readTextSamples, textSamples } from '#onnx-internal';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const folder = opt('--model', 'bench/out/smollm2');
const calibFile = opt('--calib', '/work/tmp/RELNOTES.txt');
const evalFile = opt('--eval', '/usr/share/common-licenses/GPL-3');
const calibCount = Number(opt('--calib-count', 128)), seqLen = Number(opt('--seq-len', 512));
const evalCount = Number(opt('--eval-count', 16)), evalSeqLen = Number(opt('--eval-seq-len', 256));
const out = opt('--out', 'bench/out/lm-windows.json');

const files = await resolveTextModel(folder);
const model = await loadOnnx(files.model);
const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
const ids = (set) => set.samples.map((s) => Array.from(s.feeds.input_ids.data, Number));
const calib = await readTextSamples(calibFile, { tokenizer, seqLen, inputs: model.inputs, outputs: model.outputs, limit: calibCount });
const held = textSamples({ text: fs.readFileSync(evalFile, 'utf8'), tokenizer, seqLen: evalSeqLen, inputs: model.inputs, outputs: model.outputs, limit: evalCount });
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify({ calibFile, evalFile, seqLen, evalSeqLen, calib: ids(calib), eval: ids(held) }));
console.log(`${out}: ${calib.samples.length} calibration windows of ${seqLen} tokens (${calib.why}), ${held.samples.length} held-out windows of ${evalSeqLen}`);
