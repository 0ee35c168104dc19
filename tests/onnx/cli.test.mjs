// The sparsekit-wasm CLI end to end: help, inspect, prune in each mode, the report against the
// written file, and bad input (exit code, one stderr line, no output file left behind).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build, CLI } from './build.mjs';

build();
const { OnnxModel, loadOnnx } = await import('sparsekit-wasm/onnx');
const G = await import('./graphs.mjs');

let dir;
const files = {};
before(() => {
  dir = G.tmpDir('sk-cli-');
  for (const [name, make] of Object.entries(G.GRAPHS)) {
    files[name] = path.join(dir, `${name}.onnx`);
    fs.writeFileSync(files[name], make());
  }
  files.fp16 = path.join(dir, 'fp16.onnx');
  fs.writeFileSync(files.fp16, G.residual('fp16'));
});

function cli(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Zeros per prunable weight, counted in a written model. */
async function zerosInFile(file) {
  const m = await loadOnnx(file);
  return Object.fromEntries(m.prunable().map((w) => [w.name, m.readFloat(w).filter((v) => v === 0).length]));
}

test('--help of the program and of each command', () => {
  for (const args of [['--help'], ['prune', '--help'], ['inspect', '-h']]) {
    const r = cli(...args);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Usage: sparsekit-wasm/);
  }
  assert.match(cli('prune', '--help').out, /--channels F/);
});

test('inspect lists prunable weights, views and channel groups (text and JSON)', () => {
  const r = cli('inspect', files.residual);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /4 prunable weights/);
  assert.match(r.out, /fc\.w\s+Gemm\s+\[5,6\]\s+5x6/);
  assert.match(r.out, /kept whole: it reaches graph output "y"/);
  const j = JSON.parse(cli('inspect', files.flattenGemm, '--json').out);
  const fc = j.weights.find((w) => w.name === 'fc.w');
  assert.deepEqual([fc.view, fc.transposed], [[5, 96], true]);
  assert.ok(j.channelGroups.some((g) => g.prunable && g.channels === 6));
});

for (const [label, args] of [
  ['--sparsity 0.5', ['--sparsity', '0.5']],
  ['--sparsity 0.6 --block 2x2 --scope global', ['--sparsity', '0.6', '--block', '2x2', '--scope', 'global']],
  ['--sparsity 0.5 --scope row', ['--sparsity', '0.5', '--scope', 'row']],
  ['--nm 2:4', ['--nm', '2:4']],
]) {
  for (const input of ['residual', 'fp16', 'mlp']) {
    test(`prune ${label} (${input}): reported sparsity equals the file`, async () => {
      const out = path.join(dir, `out-${input}-${label.replace(/[^a-z0-9]+/gi, '_')}.onnx`);
      const rep = out + '.json';
      const r = cli('prune', files[input], '-o', out, ...args, '--report', rep);
      assert.equal(r.code, 0, r.err);
      const report = JSON.parse(fs.readFileSync(rep, 'utf8'));
      const zeros = await zerosInFile(out);
      let total = 0, n = 0;
      for (const l of report.layers) {
        assert.equal(l.zeros, zeros[l.name], `${l.name}: reported zeros = file zeros`);
        total += zeros[l.name];
        n += l.params;
      }
      assert.equal(report.sparsity, total / n);
      if (args[0] === '--sparsity' && !args.includes('global')) {
        for (const l of report.layers) assert.ok(l.sparsity >= 0.25, `${l.name} pruned (${l.sparsity})`);
      }
      if (args[0] === '--nm') {
        const m = OnnxModel.parse(fs.readFileSync(out));
        for (const l of report.layers.filter((x) => !x.note)) {
          const w = m.weight(l.name);
          const conv = w.op === 'Conv';
          // groups of 4 along the reduction axis: input channels (per kernel position) / view columns
          const v = conv ? m.readFloat(w) : m.readView(w);
          const [rows, k, inner] = conv ? [w.dims[0], w.dims[1], w.dims[2] * w.dims[3]] : [w.view.rows, w.view.cols, 1];
          for (let o = 0; o < rows; o++) for (let c0 = 0; c0 < k; c0 += 4) for (let s = 0; s < inner; s++) {
            let nz = 0;
            for (let c = c0; c < c0 + 4; c++) if (v[(o * k + c) * inner + s] !== 0) nz++;
            assert.ok(nz <= 2, `${l.name}: ${nz} non-zeros in a group of 4`);
          }
        }
      }
      assert.match(r.out, /wrote /);
    });
  }
}

test('prune --channels 0.3: smaller file, same output shape, runs; report lists groups kept whole', async () => {
  const out = path.join(dir, 'residual-ch.onnx');
  const r = cli('prune', files.residual, '-o', out, '--channels', '0.3', '--report', out + '.json');
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(fs.readFileSync(out + '.json', 'utf8'));
  assert.ok(report.files.bytesAfter < report.files.bytesBefore);
  assert.ok(report.params.after < report.params.before);
  assert.ok(report.groups.kept.some((g) => /graph output/.test(g.reason)));
  const feeds = G.feedsFor(null, { x: [1, 4, 8, 8] });
  const y = await G.run(out, feeds);
  assert.deepEqual(y.y.dims, [1, 5]);
});

test('progress goes to stderr as plain lines when not a terminal; -q silences it', () => {
  const out = path.join(dir, 'progress.onnx');
  const r = cli('prune', files.residual, '-o', out, '--sparsity', '0.5');
  assert.equal(r.code, 0);
  assert.match(r.err, /^prune: 4\/4 /m);
  assert.doesNotMatch(r.err, /\r/);
  const q = cli('prune', files.residual, '-o', out, '--sparsity', '0.5', '-q');
  assert.equal(q.err, '');
});

test('bad input: exit code != 0, one clear stderr line, no output file', () => {
  const truncated = path.join(dir, 'truncated.onnx');
  fs.writeFileSync(truncated, fs.readFileSync(files.residual).subarray(0, 900));
  const text = path.join(dir, 'text.onnx');
  fs.writeFileSync(text, 'hello, I am not an ONNX model\n'.repeat(20));
  const cases = [
    [[files.residual + '.missing', '--sparsity', '0.5'], 1, /cannot read .*no such file/],
    [[truncated, '--sparsity', '0.5'], 1, /truncated/],
    [[text, '--sparsity', '0.5'], 1, /not an ONNX model/],
    [[files.residual, '--sparsity', '1.5'], 2, /--sparsity must be a number in \[0, 1\]/],
    [[files.residual, '--sparsity=-0.1'], 2, /\[0, 1\]/],
    [[files.residual, '--sparsity', '-0.1'], 2, /ambiguous/],
    [[files.residual, '--sparsity', 'half'], 2, /needs a number/],
    [[files.residual, '--nm', '5:4'], 2, /N:M with 1 <= N <= M/],
    [[files.concat, '--nm', '4:8'], 1, /fits no layer/],
    [[files.residual, '--frobnicate'], 2, /Unknown option '--frobnicate'/],
    [[files.residual, '--sparsity', '0.5', '--nm', '2:4'], 2, /exactly one of/],
    [[files.residual, '--channels', '1'], 2, /below 1/],
    [[files.residual, '--channels', '0.3', '--round-to', '0'], 2, /--round-to needs a positive integer/],
    [[files.residual, '--sparsity', '0.5', '--method', 'wanda', '--calib', 'synthetic'], 2, /calibration API/],
    [[files.residual, '--sparsity', '0.5', '--method', 'sparsegpt'], 2, /calibration API/],
    [[files.residual, '--sparsity', '0.5', '--block', '4by4'], 2, /--block must be RxC/],
  ];
  for (const [args, code, re] of cases) {
    const out = path.join(dir, `bad-${Math.random().toString(36).slice(2)}.onnx`);
    const r = cli('prune', args[0], '-o', out, ...args.slice(1));
    assert.equal(r.code, code, `${args.join(' ')}: ${r.err}`);
    const lines = r.err.trimEnd().split('\n');
    assert.equal(lines.length, 1, `one stderr line for ${args.join(' ')}: ${r.err}`);
    assert.match(lines[0], re);
    assert.match(lines[0], /^sparsekit-wasm: /);
    assert.equal(fs.existsSync(out), false, `no ${out}`);
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.includes('.tmp-')), [], 'no temporary files');
  }
  assert.equal(cli('frob').code, 2);
  assert.equal(cli('prune', files.residual, '--sparsity', '0.5').code, 2, 'no -o');
  assert.equal(cli('inspect', text).code, 1);
});
