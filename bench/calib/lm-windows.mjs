// Bench: the token ids of a language model's calibration and held-out windows, cut by the package's
// own text sampling, written to JSON for the reference pruning code in Python
// (bench/calib/reference_lm.py), so that both sides calibrate on the same windows in the same order.
// Two sets:
//   --table: the windows of the anchors' table (bench/text/lm-table.mjs): 32 × 256 tokens of the
//     licence texts and 16 × 256 of the GNU GPL v3, through bench/lib/licence-windows.mjs, the code
//     lm-table.mjs cuts them with (--seq-len, --calib-count, --eval-count as lm-table's).
//   default: the CLI's windows, 128 × 512 tokens of --calib through readTextSamples (the function the
//     CLI's `--calib FILE.txt --calib-count N --seq-len L` calls), and the same held-out windows.
//   node bench/calib/lm-windows.mjs [--table] [--model bench/out/smollm2] [--calib FILE]
//        [--calib-count 128 | 32 with --table] [--seq-len 512 | 256 with --table] [--eval FILE]
//        [--eval-count 16] [--eval-seq-len 256] [--out bench/out/lm-windows.json]
import fs from 'node:fs';
import path from 'node:path';
import { loadOnnx, resolveTextModel, readTextSamples } from '#onnx-internal';
import { licenceWindows, heldOutWindows, CALIB_LICENCES, EVAL_FILE } from '../lib/licence-windows.mjs';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const table = args.includes('--table');
const folder = opt('--model', 'bench/out/smollm2');
const calibFile = opt('--calib', table ? undefined : '/work/tmp/RELNOTES.txt');
const evalFile = opt('--eval', EVAL_FILE);
const calibCount = Number(opt('--calib-count', table ? 32 : 128)), seqLen = Number(opt('--seq-len', table ? 256 : 512));
const evalCount = Number(opt('--eval-count', 16)), evalSeqLen = Number(opt('--eval-seq-len', 256));
const out = opt('--out', 'bench/out/lm-windows.json');

const files = await resolveTextModel(folder);
const model = await loadOnnx(files.model);
const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
const ids = (set) => set.samples.map((s) => Array.from(s.feeds.input_ids.data, Number));
const { calib, held } = table
  ? licenceWindows({ model, tokenizer, seqLen, calibCount, evalCount, evalSeqLen, calib: calibFile, eval: evalFile })
  : { calib: await readTextSamples(calibFile, { tokenizer, seqLen, inputs: model.inputs, outputs: model.outputs, limit: calibCount }),
      held: heldOutWindows({ model, tokenizer, seqLen: evalSeqLen, count: evalCount, file: evalFile }) };
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify({ calibFile: calibFile ?? CALIB_LICENCES.join(' + '), evalFile, seqLen, evalSeqLen, calib: ids(calib), eval: ids(held) }));
console.log(`${out}: ${calib.samples.length} calibration windows of ${seqLen} tokens (${calib.why}), ${held.samples.length} held-out windows of ${evalSeqLen}`);
