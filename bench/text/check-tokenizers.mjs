// Bench (needs Python `tokenizers`: PYTHON=/work/venv/bin/python by default): 1 000 real English
// lines (bench/text/lines.mjs) tokenized by @huggingface/tokenizers in JS and by Python `tokenizers`,
// for each committed tokenizer (tests/data/tokenizers/*.json); reports the lines whose ids differ.
//   node bench/text/check-tokenizers.mjs [--lines 1000] [--write-fixture]
// --write-fixture writes tests/data/text/lines.json and tests/data/text/<name>.ids.jsonl (one line of Python's
// ids), which tests/onnx/tokenizers.test.mjs compares with JS without Python.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { realLines } from './lines.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOKENIZERS = path.join(ROOT, 'tests/data/tokenizers');
const FIXTURE = path.join(ROOT, 'tests/data/text');
const PYTHON = process.env.PYTHON || '/work/venv/bin/python';
const args = process.argv.slice(2);
const n = Number(args[args.indexOf('--lines') + 1]) || 1000;
const write = args.includes('--write-fixture');

const lines = realLines(n);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-tok-'));
const linesFile = path.join(tmp, 'lines.json');
fs.writeFileSync(linesFile, JSON.stringify(lines));
if (write) {
  fs.mkdirSync(FIXTURE, { recursive: true });
  fs.writeFileSync(path.join(FIXTURE, 'lines.json'), `${JSON.stringify(lines, null, 0).replace(/","/g, '",\n"')}\n`);
}
let failed = false;
for (const f of fs.readdirSync(TOKENIZERS).filter((x) => x.endsWith('.json')).sort()) {
  const name = f.replace(/\.json$/, '');
  const json = JSON.parse(fs.readFileSync(path.join(TOKENIZERS, f), 'utf8'));
  const t0 = performance.now();
  const tk = new Tokenizer(json, {});
  const js = lines.map((l) => tk.encode(l).ids);
  const jsMs = performance.now() - t0;
  const out = path.join(tmp, `${name}.ids.json`);
  execFileSync(PYTHON, [path.join(ROOT, 'bench/text/py_ids.py'), path.join(TOKENIZERS, f), linesFile, out], { stdio: 'inherit' });
  const py = JSON.parse(fs.readFileSync(out, 'utf8'));
  const bad = [];
  lines.forEach((l, i) => { if (js[i].length !== py[i].length || js[i].some((x, k) => x !== py[i][k])) bad.push(i); });
  const tokens = py.reduce((a, x) => a + x.length, 0);
  console.log(`${name}: ${lines.length} lines, ${tokens} tokens (Python), ${bad.length} line(s) differ; JS ${jsMs.toFixed(0)} ms (load + encode)`);
  for (const i of bad.slice(0, 5)) {
    const k = js[i].findIndex((x, j) => x !== py[i][j]);
    console.log(`  line ${i}: ${JSON.stringify(lines[i]).slice(0, 120)}\n    first difference at token ${k}: JS ${JSON.stringify(js[i].slice(k, k + 5))} Python ${JSON.stringify(py[i].slice(k, k + 5))}`);
  }
  if (bad.length) failed = true;
  if (write) fs.writeFileSync(path.join(FIXTURE, `${name}.ids.jsonl`), `${py.map((x) => JSON.stringify(x)).join('\n')}\n`);
}
fs.rmSync(tmp, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
