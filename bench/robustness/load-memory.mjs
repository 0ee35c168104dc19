// What a loaded model keeps in memory (issue 40): an inline .onnx parsed from its bytes, as the
// module does in a browser, against the same file read from its path in Node, whose large
// initializers stay in the file (pkg-template/src/onnx/file-backed.ts). Each way runs in a child
// process of its own (node --expose-gc) and reports process.memoryUsage() after a full GC at three
// points: the model parsed (the file's bytes dropped by the caller), every weight read once, and the
// model written to a temporary file through saveOnnx. Prints one JSON line per way and a table.
// Usage: node bench/robustness/load-memory.mjs [model.onnx]   (default bench/out/smollm2/onnx/model.onnx)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [, , arg1, arg2] = process.argv;

async function child(way, file) {
  const O = await import('#onnx-internal');
  const gc = globalThis.gc;
  // Array buffers' memory is given back after the collection that finds them dead, by V8's sweeper:
  // a few collections with a turn of the event loop between them settle the figures.
  const mem = async () => {
    for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 20)); }
    const m = process.memoryUsage();
    return { rss: m.rss, heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, external: m.external };
  };
  const base = await mem();
  const model = way === 'bytes' ? O.OnnxModel.parse(fs.readFileSync(file)) : await O.loadOnnx(file);
  const parsed = await mem();
  for (const w of model.weights) model.readFloat(w);
  const read = await mem();
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sk-load-mem-')), 'model.onnx');
  await O.saveOnnx(model, out);
  const written = await mem();
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  console.log(JSON.stringify({ way, file, bytes: fs.statSync(file).size, weights: model.weights.length, base, parsed, read, written, peakRss: process.resourceUsage().maxRSS * 1024 }));
}

if (arg1 === '--child') {
  await child(arg2, process.argv[4]);
} else {
  const file = path.resolve(arg1 ?? path.join(ROOT, 'bench/out/smollm2/onnx/model.onnx'));
  const rows = [];
  for (const way of ['bytes', 'path']) {
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', way, file], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24 });
    if (r.status !== 0) { process.stderr.write(r.stderr); process.exit(1); }
    const line = r.stdout.trim().split('\n').pop();
    console.log(line);
    rows.push(JSON.parse(line));
  }
  const mb = (b) => (b / 2 ** 20).toFixed(0);
  console.log(`\n${path.basename(file)}: ${mb(rows[0].bytes)} MiB; MiB after a full GC (rss / arrayBuffers)`);
  console.log('| way | parsed | every weight read | written | peak RSS |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    const c = (p) => `${mb(r[p].rss)} / ${mb(r[p].arrayBuffers)}`;
    console.log(`| ${r.way === 'bytes' ? 'OnnxModel.parse(bytes)' : 'loadOnnx(path)'} | ${c('parsed')} | ${c('read')} | ${c('written')} | ${mb(r.peakRss)} |`);
  }
}
