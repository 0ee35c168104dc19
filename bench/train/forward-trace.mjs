// Where the training core's forward and onnxruntime-node's part on a model (issue 38's "forward equal
// to onnxruntime within 1e-5 relative"): both run the sample bench/train/train-coverage.mjs runs
// (makeInputSet's held-out set; sample K of them) with every float tensor of the graph as an output; per
// tensor, in node order, max |ours − ort| / max |ort| (the coverage table's metric). At the model's
// final activation (Sigmoid or Softmax), each engine's output is also compared with the activation
// computed in float64 from that engine's own input, which separates the activation's rounding from
// the difference it receives; then onnxruntime as the coverage bench runs it (graph optimizations
// on, which every extra output would change), with only the activation's input added.
// Writes DIR/NAME-{input,ours,ort,ortopt}.f32 + DIR/NAME.json for bench/train/forward-trace.py, which
// adds the float64 reference of the whole graph (PyTorch through onnx2torch).
//   node bench/train/forward-trace.mjs det rec [cls] [--sample K] [--out DIR]   (after scripts/build.sh;
//   K: the held-out sample, 0 = the one train-coverage.mjs runs by default; DIR: bench/out/forward-trace)
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { DET, CLS, REC } from '../../kit/ocr-models.mjs';
import { relMax, absMax, finalActivations, activation64 } from '../lib/final-activation.mjs';

const { Trainer } = await import('sparsekit-wasm');
const { OnnxModel, ModelProto, trainGraph, makeInputSet } = await import('#onnx-internal');

const FILES = { det: DET, rec: REC, cls: CLS };
const argv = process.argv.slice(2);
const flag = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt; };
const OUT = flag('--out', 'bench/out/forward-trace');
const SAMPLE = Number(flag('--sample', '0'));
if (!Number.isInteger(SAMPLE) || SAMPLE < 0) throw new Error(`--sample: a whole number >= 0, got ${flag('--sample')}`);
const names = argv.filter((a, i) => !a.startsWith('--') && !['--out', '--sample'].includes(argv[i - 1]));
for (const n of names) if (!FILES[n]) throw new Error(`unknown model ${n}: one of ${Object.keys(FILES).join(', ')}`);
fs.mkdirSync(OUT, { recursive: true });
const f = (v) => v.toExponential(2);

/** onnxruntime-node on one input, `extra` tensors added as graph outputs. */
async function ortRun(bytes, feeds, extra) {
  const p = ModelProto.decode(bytes);
  const have = new Set(p.graph.output.map((v) => v.name));
  for (const t of extra) if (!have.has(t)) p.graph.output.push({ name: t });
  const s = await ort.InferenceSession.create(ModelProto.encode(p).finish(), { intraOpNumThreads: 1, logSeverityLevel: 3 });
  const r = await s.run(feeds);
  await s.release?.();
  return r;
}

for (const name of names) {
  const bytes = new Uint8Array(fs.readFileSync(FILES[name]));
  const m = OnnxModel.parse(bytes);
  const act = finalActivations(m)[0];
  if (!act) throw new Error(`${name}: its first output is not a Sigmoid or Softmax`);
  const sample = makeInputSet(m, { count: SAMPLE + 1, set: 'heldOut' })[SAMPLE];
  const inName = m.inputs[0].name;
  const feed = sample.feeds[inName];
  const feeds = { [inName]: new ort.Tensor(feed.type, feed.data, feed.dims) };
  const graph = trainGraph(m);
  // Every float tensor a node computes; the trainer refuses an integer (shape) tensor as an
  // output by name, so those are dropped one by one.
  let tensors = [...new Set(graph.nodes.flatMap((n) => n.outputs))].filter((t) => !graph.outputs.includes(t));
  let ours;
  for (;;) {
    const trainer = new Trainer({ ...graph, outputs: [...graph.outputs, ...tensors] });
    try {
      ours = trainer.forward([{ values: Float32Array.from(feed.data), shape: feed.dims }]);
      break;
    } catch (e) {
      const k = /value (\S+) is not a float tensor/.exec(String(e.message));
      if (!k) throw e;
      tensors = tensors.filter((t) => t !== k[1]);
    } finally {
      trainer.free();
    }
  }
  const all = [...graph.outputs, ...tensors];
  const want = await ortRun(bytes, feeds, tensors);

  const op = new Map(m.graph.node.flatMap((n) => n.output.map((t) => [t, n.op_type])));
  const rows = [...tensors, ...graph.outputs].map((t) => {
    const i = all.indexOf(t);
    return { t, i, op: op.get(t) ?? '?', shape: ours[i].shape, size: ours[i].values.length, rel: relMax(ours[i].values, want[t].data) };
  });
  console.log(`\n## ${name} (${path.basename(FILES[name])}, held-out sample ${SAMPLE}, input ${feed.dims.join('×')}): ${rows.length} float tensors, ours vs onnxruntime-node (every tensor an output)`);
  console.log('first tensor over each threshold (max |ours − ort| / max |ort|):');
  for (const th of [1e-7, 1e-6, 3e-6, 1e-5]) {
    const r = rows.findIndex((x) => x.rel > th);
    console.log(`  > ${th.toExponential(0)}: ${r < 0 ? 'none' : `#${r} ${rows[r].t} (${rows[r].op}) ${f(rows[r].rel)}`}`);
  }
  console.log('largest 8:');
  for (const r of [...rows].sort((a, b) => b.rel - a.rel).slice(0, 8)) console.log(`  #${rows.indexOf(r)} ${r.t} (${r.op}) ${f(r.rel)}`);

  const xi = all.indexOf(act.input), yi = all.indexOf(act.output), shape = ours[xi].shape;
  const oX = ours[xi].values, oY = ours[yi].values, oY64 = activation64(act, oX, shape);
  const report = (label, wX, wY) => {
    const wY64 = activation64(act, wX, shape);
    let k = 0;
    for (let i = 1; i < wY.length; i++) if (Math.abs(oY[i] - wY[i]) > Math.abs(oY[k] - wY[k])) k = i;
    console.log(`final ${act.op} (${act.input} -> ${act.output}), onnxruntime ${label}:`);
    console.log(`  input  ours vs ort: rel ${f(relMax(oX, wX))}, abs ${f(absMax(oX, wX))}, max |ort| ${f(absMax(new Float32Array(wX.length), wX))}`);
    console.log(`  output ours vs ort: rel ${f(relMax(oY, wY))} (worst at ${k}: ours ${oY[k]}, ort ${wY[k]}; inputs ours ${oX[k]}, ort ${wX[k]})`);
    console.log(`  output vs ${act.op} in float64 of the engine's own input (max abs): ours ${f(absMax(oY, oY64))}, ort ${f(absMax(wY, wY64))}`);
    console.log(`  ${act.op} in float64 of ours' input vs of ort's input: rel ${f(relMax(oY64, wY64))}`);
  };
  report('with every tensor an output', want[act.input].data, want[act.output].data);
  const plain = await ortRun(bytes, feeds, []);
  const opt = await ortRun(bytes, feeds, [act.input]);
  const pX = opt[act.input].data, pY = opt[act.output].data;
  report(`as the coverage bench runs it (output unchanged by the extra one: ${absMax(plain[act.output].data, pY) === 0})`, pX, pY);

  // For forward-trace.py: the input, then each engine's tensors one after the other in `rows` order.
  const tensorsAt = {};
  let off = 0;
  for (const r of rows) { tensorsAt[r.t] = { shape: r.shape, offset: off, length: r.size, op: r.op }; off += r.size; }
  const o32 = new Float32Array(off), w32 = new Float32Array(off);
  for (const r of rows) { o32.set(ours[r.i].values, tensorsAt[r.t].offset); w32.set(want[r.t].data, tensorsAt[r.t].offset); }
  const opt32 = new Float32Array(pX.length + pY.length);
  opt32.set(pX, 0);
  opt32.set(pY, pX.length);
  fs.writeFileSync(path.join(OUT, `${name}-input.f32`), Float32Array.from(feed.data));
  fs.writeFileSync(path.join(OUT, `${name}-ours.f32`), o32);
  fs.writeFileSync(path.join(OUT, `${name}-ort.f32`), w32);
  fs.writeFileSync(path.join(OUT, `${name}-ortopt.f32`), opt32);
  const meta = { model: FILES[name], input: { name: inName, dims: feed.dims }, final: act, order: rows.map((r) => r.t), tensors: tensorsAt };
  fs.writeFileSync(path.join(OUT, `${name}.json`), JSON.stringify(meta));
}
