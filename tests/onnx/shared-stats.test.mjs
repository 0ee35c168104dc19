// Shared Hessians (calib/shared-stats.ts): layers that read one input the same way get one Hessian,
// accumulated once, and the pruned weights are the bits one Hessian per layer gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const O = await import('#onnx-internal');
const { llamaBlocks, convFanout } = await import('../../kit/shared-graphs.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

/** Every prunable weight's bits. */
const bitsOf = (m) => new Map(m.prunable().map((w) => [w.name, new Uint32Array(m.readFloat(w).buffer.slice(0))]));

async function prunedBoth(bytes, opts) {
  const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 8 });
  const run = async (shareStatistics) => {
    const m = O.OnnxModel.parse(bytes);
    const rep = await O.calibratePrune(m, { ort: runner, calibration, minVectors: 0, ...opts, shareStatistics });
    return { m, rep };
  };
  return { shared: await run(true), alone: await run(false) };
}

for (const [name, make, consumers, distinct] of [
  // per block: q/k/v share h1, gate/up share h2, o and down alone: 7 consumers, 4 Hessians
  ['Llama-shaped, 2 blocks', () => llamaBlocks({ blocks: 2 }), 14, 8],
  // a, b1 + b2 (shared), b3 (3x3: other patches), c
  ['CNN fan-out', () => convFanout(), 5, 4],
]) {
  for (const opts of [{ sparsity: 0.5, criterion: 'sparsegpt' }, { nm: [2, 4], criterion: 'sparsegpt' }, { sparsity: 0.5, criterion: 'wanda' }, { sparsity: 0.5, criterion: 'sparsegpt', sequential: false }]) {
    test(`shared Hessians give the unshared bits: ${name}, ${JSON.stringify(opts)}`, async () => {
      const { shared, alone } = await prunedBoth(make(), opts);
      const a = bitsOf(shared.m), b = bitsOf(alone.m);
      for (const [w, bits] of a) assert.deepEqual(bits, b.get(w), `${w} differs`);
      assert.deepEqual(shared.rep.layers.map((l) => [l.name, l.method, l.relError]), alone.rep.layers.map((l) => [l.name, l.method, l.relError]));
      const h = shared.rep.hessians, u = alone.rep.hessians;
      assert.equal(h.consumers, consumers);
      assert.equal(h.accumulated, distinct);
      assert.equal(u.accumulated, consumers, 'unshared: one per layer');
      // The work done unshared is what sharing says it saved; sharing does less.
      assert.equal(h.flopsUnshared, u.flops);
      assert.ok(h.flops < u.flops, `${h.flops} < ${u.flops}`);
      assert.ok(shared.rep.layers.some((l) => l.sparsity > 0.4), 'something was pruned');
    });
  }
}

test('statsKey: same input and geometry share, another geometry or input does not', () => {
  const m = O.OnnxModel.parse(convFanout());
  const byName = new Map(O.findLayers(m).map((l) => [l.name, O.statsKey(l)]));
  assert.equal(byName.get('b1.w'), byName.get('b2.w'));
  assert.notEqual(byName.get('b1.w'), byName.get('b3.w'));
  assert.notEqual(byName.get('a.w'), byName.get('b1.w'));
});

test('SharedStats frees each Hessian once and adds nothing for tensors it does not read', () => {
  const m = O.OnnxModel.parse(llamaBlocks({ blocks: 1 }));
  const layers = O.findLayers(m);
  const s = new O.SharedStats(layers);
  assert.equal(s.inputs().length, 4);
  const q = layers.find((l) => l.name === 'b0.q'), k = layers.find((l) => l.name === 'b0.k');
  assert.equal(s.get(q), s.get(k));
  s.add('not-read', new Float32Array(16), [1, 16]);
  assert.equal(s.sharing.flops, 0);
  s.add(q.input, new Float32Array(12 * 16).fill(1), [1, 12, 16]);
  assert.equal(s.get(q).h.count, 12);
  assert.equal(s.sharing.flops * 3, s.sharing.flopsUnshared);
  s.free();
  s.free();
});
