// Channel removal with calibration (removeChannelsCalibrated): the removed model computes what the
// masked model computes (same decisions, same compensation) to float rounding, and compensation
// raises the held-out output cosine over plain removal on small generated models.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

async function sets(bytes) {
  const m = O.OnnxModel.parse(bytes);
  const calibration = O.makeInputSet(m, { count: 16, generator: 'generic' });
  const heldOut = O.makeInputSet(m, { count: 8, set: 'heldOut', generator: 'generic' });
  return { calibration, heldOut, reference: await O.runSet(runner, bytes, heldOut) };
}

for (const name of ['residual', 'concat', 'flattenGemm', 'mlp', 'depthwise']) {
  test(`${name}: calibrated removal = calibrated masking to float rounding (wanda and sparsegpt)`, async () => {
    const bytes = G.GRAPHS[name]();
    const { calibration, heldOut } = await sets(bytes);
    for (const method of ['wanda', 'sparsegpt']) {
      const removed = O.OnnxModel.parse(bytes), masked = O.OnnxModel.parse(bytes);
      const opts = { ort: runner, calibration, fraction: 0.5, roundTo: 1, method, percDamp: 0.1 };
      const r = await O.removeChannelsCalibrated(removed, opts);
      await O.removeChannelsCalibrated(masked, { ...opts, apply: 'mask' });
      assert.ok(r.params.after < r.params.before, 'channels removed');
      assert.ok(r.compensation.length > 0 && r.compensation.every((c) => c.removedColumns > 0));
      const a = await O.runSet(runner, removed.encode(), heldOut), b = await O.runSet(runner, masked.encode(), heldOut);
      for (let i = 0; i < a.length; i++) for (const k of Object.keys(a[i])) {
        const scale = Math.max(1, ...b[i][k].map(Math.abs));
        assert.ok(G.maxAbsDiff(a[i][k], b[i][k]) <= 1e-5 * scale, `${name} ${method}: removed vs masked ${G.maxAbsDiff(a[i][k], b[i][k])}`);
      }
    }
  });
}

test('compensation raises the held-out cosine over plain removal (residual, mlp, concat)', async () => {
  for (const name of ['residual', 'mlp', 'concat']) {
    const bytes = G.GRAPHS[name]();
    const { calibration, heldOut, reference } = await sets(bytes);
    const cos = {};
    for (const method of ['magnitude', 'wanda', 'sparsegpt']) {
      const m = O.OnnxModel.parse(bytes);
      if (method === 'magnitude') O.removeChannels(m, { fraction: 0.5, roundTo: 1 });
      else await O.removeChannelsCalibrated(m, { ort: runner, calibration, fraction: 0.5, roundTo: 1, method, percDamp: 0.1 });
      cos[method] = O.compareSets(reference, await O.runSet(runner, m.encode(), heldOut)).cosine;
    }
    assert.ok(cos.wanda > cos.magnitude + 0.01, `${name}: wanda ${cos.wanda} > magnitude ${cos.magnitude}`);
    assert.ok(cos.sparsegpt > cos.magnitude + 0.01, `${name}: sparsegpt ${cos.sparsegpt} > magnitude ${cos.magnitude}`);
  }
});

test('planChannels with the same options is the decision removeChannels applies; given keep-masks are used as is', async () => {
  const bytes = G.residual();
  const m = O.OnnxModel.parse(bytes);
  const plan = O.planChannels(m, { fraction: 0.5, roundTo: 1 });
  assert.ok(plan.size > 0);
  const flipped = new Map([...plan].map(([id, k]) => [id, k.map((v) => 1 - v)]));
  for (const k of flipped.values()) if (!k.some((v) => v)) k[0] = 1;
  const a = O.OnnxModel.parse(bytes), b = O.OnnxModel.parse(bytes);
  O.removeChannels(a, { fraction: 0.5, roundTo: 1 });
  O.removeChannels(b, { fraction: 0.5, roundTo: 1, keep: plan });
  assert.deepEqual(a.encode(), b.encode());
  const c = O.OnnxModel.parse(bytes);
  O.removeChannels(c, { fraction: 0.5, roundTo: 1, keep: flipped });
  assert.notDeepEqual(c.encode(), a.encode());
  assert.throws(() => O.removeChannels(O.OnnxModel.parse(bytes), { fraction: 0.5, keep: new Map([[[...plan.keys()][0], new Uint8Array(1)]]) }), (e) => e.code === 'shape_mismatch');
});

test('refused or cancelled calibrated removal leaves the model as it was', async () => {
  const bytes = G.residual();
  const { calibration } = await sets(bytes);
  const m = O.OnnxModel.parse(bytes);
  const before = m.encode();
  await assert.rejects(O.removeChannelsCalibrated(m, { ort: runner, calibration, fraction: 1 }), (e) => e.code === 'invalid_sparsity');
  await assert.rejects(O.removeChannelsCalibrated(m, { ort: runner, calibration, fraction: 0.5, method: 'obs' }), (e) => e.code === 'invalid_arguments');
  await assert.rejects(O.removeChannelsCalibrated(m, { ort: runner, calibration: [], fraction: 0.5 }), (e) => e.code === 'invalid_arguments');
  const ctl = new AbortController();
  let pruned = 0;
  await assert.rejects(O.removeChannelsCalibrated(m, { ort: runner, calibration, fraction: 0.5, roundTo: 1, method: 'sparsegpt', signal: ctl.signal,
    onCalibProgress: (p) => { if (p.phase === 'prune') { pruned++; if (pruned >= 2) ctl.abort(); } } }), (e) => e.code === 'cancelled');
  assert.ok(pruned >= 2);
  assert.deepEqual(m.encode(), before);
});
