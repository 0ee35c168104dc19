// Shared helpers of the playground tests: model paths, onnxruntime-node runs, fixture models.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';
import ort from 'onnxruntime-node';
import { OnnxModel, ModelProto, DT, floatArrayToHalf, resolveInputShape, ORT_TYPES } from '#onnx-internal';

import { ROOT } from '../../kit/ocr-models.mjs';
export { ROOT, MODELS, DET, CLS, REC, parseFile } from '../../kit/ocr-models.mjs';
export const ARTIFACTS = path.join(ROOT, 'tests/artifacts');

import { importWww } from '../../kit/import-www.mjs';

export { importWww };
const { makeInputData } = await importWww('model-input.ts');

export function tmpDir(prefix = 'sk-playground-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Runs a model (bytes or a path; `parsed` gives its inputs) on the deterministic input the page uses,
 * shapes resolved as the page does; returns {data: {name: values}, dims: {name: number[]}}.
 */
export async function runModelOutputs(modelOrPath, parsed) {
  const session = await ort.InferenceSession.create(modelOrPath);
  const feeds = {};
  for (const inp of parsed.inputs) {
    const shape = resolveInputShape(inp, parsed.outputs);
    feeds[inp.name] = new ort.Tensor(ORT_TYPES[inp.elemType] ?? 'float32', makeInputData(shape, inp.elemType), shape);
  }
  const out = await session.run(feeds);
  const data = {}, dims = {};
  for (const [k, v] of Object.entries(out)) { data[k] = v.data; dims[k] = Array.from(v.dims); }
  await session.release?.();
  return { data, dims };
}

/** The outputs of runModelOutputs alone: {name: values}. */
export async function runModel(modelOrPath, parsed) {
  return (await runModelOutputs(modelOrPath, parsed)).data;
}

/** Moves every float Constant of the graph into an initializer (so that it can become external data). */
function constantsToInitializers(model) {
  const g = model.graph;
  const keep = [];
  for (const n of g.node) {
    const a = n.op_type === 'Constant' && n.attribute.find((x) => x.name === 'value' && x.t);
    if (a && a.t.data_type === DT.FLOAT && a.t.dims.length >= 1) {
      a.t.name = n.output[0];
      g.initializer.push(a.t);
    } else keep.push(n);
  }
  g.node = keep;
}

/** A copy of `src` whose float weights live in an external file `weights.bin` (written next to it). */
export function makeExternalDataModel(src, dir) {
  const model = ModelProto.decode(fs.readFileSync(src));
  constantsToInitializers(model);
  const chunks = [];
  let offset = 0;
  for (const t of model.graph.initializer) {
    const raw = t.raw_data;
    if (!raw || raw.length < 64) continue;
    chunks.push(Buffer.from(raw));
    t.raw_data = new Uint8Array(0);
    delete t.raw_data;
    t.data_location = 1;
    t.external_data = [
      { key: 'location', value: 'weights.bin' },
      { key: 'offset', value: String(offset) },
      { key: 'length', value: String(raw.length) },
    ];
    offset += raw.length;
    const pad = (64 - (offset % 64)) % 64;           // aligned like onnx's save_as_external_data
    if (pad) { chunks.push(Buffer.alloc(pad)); offset += pad; }
  }
  const onnxPath = path.join(dir, 'model_ext.onnx');
  fs.writeFileSync(onnxPath, ModelProto.encode(model).finish());
  fs.writeFileSync(path.join(dir, 'weights.bin'), Buffer.concat(chunks));
  return { onnxPath, dataPath: path.join(dir, 'weights.bin') };
}

/** A copy of `src` whose Conv weights are FLOAT16 constants followed by Cast(to=FLOAT). */
export function makeFp16Model(src) {
  const model = ModelProto.decode(fs.readFileSync(src));
  const g = model.graph;
  const convWeights = new Set(g.node.filter((n) => n.op_type === 'Conv').map((n) => n.input[1]));
  const nodes = [];
  for (const n of g.node) {
    nodes.push(n);
    const a = n.op_type === 'Constant' && n.attribute.find((x) => x.name === 'value' && x.t);
    if (!a || !convWeights.has(n.output[0]) || a.t.data_type !== DT.FLOAT) continue;
    const raw = a.t.raw_data;
    const f32 = new Float32Array(new Uint8Array(raw).buffer.slice(0));
    a.t.data_type = DT.FLOAT16;
    a.t.raw_data = new Uint8Array(floatArrayToHalf(f32).buffer);
    const out = n.output[0];
    n.output = [out + '__fp16'];
    nodes.push({ op_type: 'Cast', input: [out + '__fp16'], output: [out], name: out + '__cast',
      attribute: [{ name: 'to', type: 2, i: DT.FLOAT }], domain: '' });
  }
  g.node = nodes;
  return ModelProto.encode(model).finish();
}


/**
 * Imports sparsekit-wasm for Node from pkg/ (or $SPARSEKIT_PKG), following its package.json
 * `exports` (node > import > default) or `main`. Throws when it is not built: a test never
 * skips silently (scripts/test.sh builds pkg/ first; run `npm run build` when calling node --test
 * by hand).
 */
export async function loadSparsekit() {
  const dir = process.env.SPARSEKIT_PKG || path.join(ROOT, 'pkg');
  const pj = path.join(dir, 'package.json');
  if (!fs.existsSync(pj)) throw new Error(`sparsekit-wasm is not built: ${pj} is missing (npm run build)`);
  const meta = JSON.parse(fs.readFileSync(pj, 'utf8'));
  let entry = meta.exports?.['.'] ?? meta.exports;
  const pick = (e) => (typeof e === 'string' ? e : e && (pick(e.node) ?? pick(e.import) ?? pick(e.default)));
  entry = pick(entry) ?? meta.module ?? meta.main ?? 'index.js';
  const { pathToFileURL } = await import('node:url');
  const mod = await import(pathToFileURL(path.join(dir, entry)).href);
  if (mod.ready && typeof mod.ready.then === 'function') await mod.ready;
  if (typeof mod.default === 'function') await mod.default();
  return mod;
}

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/**
 * Serves the playground (scripts/serve.sh, builds it if needed) on a free loopback port and
 * launches headless Chromium. Returns `{ baseUrl, browser, firstResponse, openPage, stop }`; `firstResponse`
 * is the page's first successful response (for header checks). The server's output is in the
 * errors thrown when it exits or does not come up within 15 minutes.
 */
export async function startPlayground() {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}/`;
  const log = [];
  const server = spawn('bash', ['scripts/serve.sh'], { cwd: ROOT, env: { ...process.env, PORT: String(port) }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout.on('data', (d) => log.push(String(d)));
  server.stderr.on('data', (d) => log.push(String(d)));
  const stopServer = () => {
    if (server.exitCode == null) { try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ } }
  };
  const end = Date.now() + 15 * 60_000;
  let firstResponse;
  for (;;) {
    if (server.exitCode != null) throw new Error(`serve.sh exited with ${server.exitCode}:\n${log.join('')}`);
    try { const r = await fetch(baseUrl); if (r.ok) { firstResponse = r; break; } } catch { /* not yet */ }
    if (Date.now() > end) { stopServer(); throw new Error(`server did not come up:\n${log.join('')}`); }
    await new Promise((r) => setTimeout(r, 300));
  }
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  return {
    baseUrl, browser, firstResponse,
    /** A fresh context on the page (with `query`), once the engine badge says loaded or failed; page errors are collected. */
    async openPage(query = '') {
      const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 1000 } });
      const page = await context.newPage();
      const problems = [];
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      await page.goto(baseUrl + query);
      await page.waitForSelector('#engine.ok, #engine.bad', { timeout: 60_000 });
      return { context, page, problems };
    },
    async stop() { await browser.close(); stopServer(); },
  };
}

/**
 * Opens the page's fold of per-layer controls and other tools (the per-layer table, calibration
 * criteria, channel groups), as a user clicks its summary: the page opens on the job, the fold closed.
 */
export async function openPerLayer(page) {
  const more = page.locator('#more');
  if (!(await more.evaluate((d) => d.open))) await more.locator(':scope > summary').click();
}

/**
 * A YOLO-like detector in miniature (random weights, seeded): input `[batch, 3, height, width]`
 * with symbolic dims, `levels` stride-2 Convs (5: stride 32 in all), the last map upsampled x2 and
 * concatenated with the one before (as a feature pyramid does: it only lines up when height and
 * width are multiples of 2^levels), output reshaped to rank 3 `[batch, 12, anchors]` like a YOLOv8 head.
 */
export function makeYoloLikeModel({ levels = 5 } = {}) {
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 - 0.5; };
  const initializer = [];
  const tensor = (name, dims, values, dataType = DT.FLOAT) => {
    const raw = dataType === DT.INT64 ? new BigInt64Array(values.map(BigInt)) : Float32Array.from(values);
    initializer.push({ name, dims, data_type: dataType, raw_data: new Uint8Array(raw.buffer) });
  };
  const nodes = [];
  const chans = [3, ...Array(levels - 1).fill(8), 4];
  let prev = 'images';
  for (let i = 1; i < chans.length; i++) {
    const [cin, cout] = [chans[i - 1], chans[i]];
    tensor(`conv${i}.weight`, [cout, cin, 3, 3], Array.from({ length: cout * cin * 9 }, () => rnd() * 0.6));
    tensor(`conv${i}.bias`, [cout], Array.from({ length: cout }, () => rnd() * 0.1));
    nodes.push({ op_type: 'Conv', name: `conv${i}`, input: [prev, `conv${i}.weight`, `conv${i}.bias`], output: [`c${i}`],
      attribute: [{ name: 'kernel_shape', type: 7, ints: [3, 3] }, { name: 'strides', type: 7, ints: [2, 2] }, { name: 'pads', type: 7, ints: [1, 1, 1, 1] }] });
    nodes.push({ op_type: 'Relu', name: `relu${i}`, input: [`c${i}`], output: [`r${i}`] });
    prev = `r${i}`;
  }
  tensor('up.scales', [4], [1, 1, 2, 2]);
  tensor('head.shape', [3], [0, 12, -1], DT.INT64);
  nodes.push({ op_type: 'Resize', name: 'up', input: [prev, '', 'up.scales'], output: ['up'], attribute: [{ name: 'mode', type: 3, s: new TextEncoder().encode('nearest') }] });
  nodes.push({ op_type: 'Concat', name: 'fpn', input: [`r${levels - 1}`, 'up'], output: ['fpn'], attribute: [{ name: 'axis', type: 2, i: 1 }] });
  nodes.push({ op_type: 'Reshape', name: 'head', input: ['fpn', 'head.shape'], output: ['output0'] });
  const dim = (d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d });
  const value = (name, dims) => ({ name, type: { tensor_type: { elem_type: DT.FLOAT, shape: { dim: dims.map(dim) } } } });
  const model = ModelProto.fromObject({
    ir_version: 8, producer_name: 'sparsekit-wasm tests', opset_import: [{ domain: '', version: 13 }],
    graph: { name: 'yolo-like', node: nodes, initializer, input: [value('images', ['batch', 3, 'height', 'width'])], output: [value('output0', ['batch', 12, 'anchors'])] },
  });
  return ModelProto.encode(model).finish();
}
