// The plain-JS fallback of the calibration contract (www/src/calib/js-obs.js) against the shared
// conformance cases (../shared/testdata/obs-cases): Hessians, Wanda scores and SparseGPT results.
// It is the path the playground takes when the package lacks Hessian/sparseGpt, so it must be right.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';
import { JsHessian, jsWandaScores, jsSparseGpt } from '../../www/src/calib/js-obs.js';

const DIR = [path.join(ROOT, '../shared/testdata/obs-cases')].find((d) => fs.existsSync(d));
const f32 = (t) => Float32Array.from(t.data, Number);
const close = (got, exp, { rtol, atol }) => {
  const e = Math.fround(Number(exp));
  return Math.abs(got - e) <= atol + rtol * Math.abs(e);
};

function buildHessian(spec) {
  const h = new JsHessian(spec.cols);
  for (const c of spec.calls) {
    if (c.op === 'add_rows') h.addRows(f32(c.x), c.n ?? c.x.shape[0]);
    else {
      const conv = { kernelShape: c.conv.kernel_shape };
      if (c.conv.strides) conv.strides = c.conv.strides;
      if (c.conv.pads) conv.pads = c.conv.pads;
      if (c.conv.dilations) conv.dilations = c.conv.dilations;
      h.addConv(f32(c.x), c.input_shape ?? c.x.shape, conv);
    }
  }
  return h;
}

const cases = DIR ? JSON.parse(fs.readFileSync(path.join(DIR, 'index.json'), 'utf8')) : [];
const list = Array.isArray(cases) ? cases : cases.cases;

test('js-obs passes every non-error obs conformance case', { skip: !DIR && 'obs-cases not found' }, () => {
  let checked = 0;
  for (const entry of list) {
    if (entry.family.startsWith('error')) continue;
    const c = JSON.parse(fs.readFileSync(path.join(DIR, `${entry.id}.json`), 'utf8'));
    const h = buildHessian(c.hessian);
    const ex = c.expect;
    if (c.op.startsWith('Hessian')) {
      assert.equal(h.count, ex.count, c.id);
      h.matrix().forEach((v, i) => assert.ok(close(v, ex.matrix.data[i], c.tol.matrix), `${c.id} matrix[${i}]`));
      h.inputNorms().forEach((v, i) => assert.ok(close(v, ex.input_norms.data[i], c.tol.input_norms), `${c.id} norms[${i}]`));
    } else {
      const data = f32(c.param);
      const shape = c.param.shape;
      const view = c.view
        ? { data, shape: c.view.shape, stride: c.view.stride }
        : { data, shape: [shape[0], shape.slice(1).reduce((a, b) => a * b, 1)], stride: [shape.slice(1).reduce((a, b) => a * b, 1), 1] };
      if (c.op === 'wanda_scores') {
        jsWandaScores(view, h).forEach((v, i) => assert.ok(close(v, ex.scores.data[i], c.tol.scores), `${c.id} scores[${i}]`));
      } else {
        const opts = {};
        const a = c.args;
        if (a.sparsity !== undefined) opts.sparsity = Number(a.sparsity);
        if (a.nm !== undefined) opts.nm = a.nm;
        if (a.keep !== undefined) opts.keep = Uint8Array.from(a.keep.data ?? a.keep);
        if (a.block_size !== undefined) opts.blockSize = a.block_size;
        if (a.perc_damp !== undefined) opts.percDamp = Number(a.perc_damp);
        const mask = jsSparseGpt(view, h, opts);
        assert.deepEqual(Array.from(mask), Array.from(ex.mask.data, Number), `${c.id} mask`);
        data.forEach((v, i) => assert.ok(close(v, ex.param.data[i], c.tol.param), `${c.id} param[${i}]: ${v} vs ${ex.param.data[i]}`));
      }
    }
    checked++;
  }
  assert.ok(checked >= 100, `only ${checked} cases checked`);
});
