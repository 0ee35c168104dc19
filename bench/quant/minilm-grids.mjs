// MiniLM-L6 (all-MiniLM-L6-v2) in 4 bits, round-to-nearest through quantizeModel (no calibration):
// what the group size and fewer levels for the embedding tables (or everything) do to brotli-9 size,
// embedding cosine / 10-NN kept (the package's 'embedding' fidelity) and the labelled task of
// bench/lib/debian-sections.mjs. "tableL" = the tables' codes on an L-level grid (-L/2 .. L/2-1, the
// extreme at -L/2) inside the 4-bit container: the file keeps the int4 forms (same ops, same speed),
// brotli sees fewer symbols. Writes bench/out/quant/explore-*.onnx (for bench/quant/packing.mjs).
// Usage: node bench/quant/minilm-grids.mjs   (the model folder of bench/quant/minilm.mjs)
import fs from 'node:fs';
import ortNode from 'onnxruntime-node';
import { runSet, makeOrtRunner, fidelity, quantizeModel, rtnQuantize, OnnxModel } from '#onnx-internal';
import { knnAccuracy } from '../lib/debian-sections.mjs';
import { minilmProbe, brotli9 } from '../lib/encoder-samples.mjs';
const runner = makeOrtRunner(ortNode, { intraOpNumThreads: 1 });
const { ref, held, dense, denseBytes, refSet, heldSet, dH, dAcc } = await minilmProbe(runner);
const brotli = brotli9;
// 2L levels inside the 4-bit container: codes -L..L-1, the extreme at -L (the int4 grid's rule)
const lowBits = (L) => (values, rows, cols, grid) => {
  const q = rtnQuantize(values, rows, cols, grid);
  const w = q.width;
  for (let r = 0; r < rows; r++) for (let g = 0; g < q.groupsPerRow; g++) {
    const s8 = q.scales[r * q.groupsPerRow + g], s = s8 * 8 / L;
    q.scales[r * q.groupsPerRow + g] = s;
    for (let c = g * w; c < Math.min(cols, (g + 1) * w); c++) { const i = r * cols + c; const v = Math.round(values[i] / s); q.codes[i] = v > L - 1 ? L - 1 : v < -L ? -L : v; }
  }
  return q;
};
const isTable = (rows) => rows !== 384 && rows !== 1536;
const V = {
  'g32': { scheme: 'int4', group: 32 },
  'g64': { scheme: 'int4', group: 64 },
  'g128': { scheme: 'int4', group: 128 },
  'e8 g32': { scheme: 'int4', group: 32, embeddings: 'int8' },
  'table3 g32': { scheme: 'int4', group: 32, quantizer: (v, r, c, g) => (isTable(r) ? lowBits(4)(v, r, c, g) : rtnQuantize(v, r, c, g)) },
  'table3 g128': { scheme: 'int4', group: 128, quantizer: (v, r, c, g) => (isTable(r) ? lowBits(4)(v, r, c, g) : rtnQuantize(v, r, c, g)) },
  'all3 g32': { scheme: 'int4', group: 32, quantizer: lowBits(4) },
  'table2 g32': { scheme: 'int4', group: 32, quantizer: (v, r, c, g) => (isTable(r) ? lowBits(2)(v, r, c, g) : rtnQuantize(v, r, c, g)) },
};
console.log(`dense acc ${(100 * dAcc).toFixed(2)}`);
for (const [k, o] of Object.entries(V)) {
  const m = OnnxModel.parse(denseBytes);
  quantizeModel(m, o);
  const b = m.encode();
  fs.writeFileSync(`bench/out/quant/explore-${k.replace(/ /g, '_')}.onnx`, b);
  const out = await runSet(runner, b, heldSet.samples);
  const f = fidelity(dH, out, { inputs: heldSet.samples }).outputs.find((x) => x.name === 'sentence_embedding');
  const acc = knnAccuracy(await runSet(runner, b, refSet.samples), out, ref, held);
  console.log(`| ${k} | ${(b.length / 2 ** 20).toFixed(2)} | ${(brotli(b) / 2 ** 20).toFixed(2)} | ${f.metrics.cosine.toFixed(4)} / ${f.metrics.minCosine.toFixed(4)} | ${(100 * f.metrics.neighboursKept).toFixed(1)} | ${(100 * acc).toFixed(2)} (${(100 * (acc - dAcc)).toFixed(2)}) |`);
}
