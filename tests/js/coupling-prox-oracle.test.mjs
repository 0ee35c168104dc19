// The float64 coupling-prox oracle that judges pub-0583 (tests/support/coupling-prox-oracle.mjs)
// must itself reproduce every coupling Adam soft-threshold case that has expected numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compare, f32, prod, sameShape, scatter, stridesOf, tolOf } from '../support/cases.mjs';
import { fsCaseIO } from '../support/cases-fs.mjs';
import { couplingAdamProx } from '../support/coupling-prox-oracle.mjs';

test('the coupling-prox oracle reproduces every coupling soft threshold with conditioners', () => {
  const folder = 'sparsekit-cases';
  const cases = fsCaseIO
    .files(folder)
    .filter((f) => f.includes('-BlockCoupling.soft_threshold'))
    .map((f) => fsCaseIO.read(folder, f))
    .filter((c) => c.args.conditioners && c.expect.params);
  assert.ok(cases.length >= 10, `only ${cases.length} cases to check the oracle against`);
  for (const c of cases) {
    const specs = c.specs.map((s) => ({
      param: f32(s.param),
      viewShape: s.view ? s.view.shape : s.param.shape,
      viewStride: s.view ? s.view.stride : stridesOf(s.param.shape),
      blockShape: s.block_shape,
    }));
    const conds = c.args.conditioners.map((t, i) =>
      sameShape(t.shape, specs[i].viewShape) ? scatter(f32(t), prod(c.specs[i].param.shape), specs[i].viewShape, specs[i].viewStride) : f32(t),
    );
    const opts = {};
    if (c.args.max_iter !== undefined) opts.maxIter = c.args.max_iter;
    if (c.args.atol !== undefined) opts.atol = c.args.atol;
    if (c.args.eps !== undefined && c.args.eps !== null) opts.eps = c.args.eps;
    const got = couplingAdamProx(specs, c.orders, f32(c.args.block_thresholds), conds, opts);
    assert.equal(compare('params', Array.from(got, (p) => Array.from(p)), c.expect.params, tolOf(c, 'params')), null, c.id);
  }
});
