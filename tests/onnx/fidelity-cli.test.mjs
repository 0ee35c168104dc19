// The prune command's fidelity and transport-size parts end to end: --eval DIR (held-out samples,
// refused when it shares a file with --calib), --metric OUTPUT=KIND, the fidelity table and the
// report's `fidelity`, and the gzip / brotli sizes of the written model.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { build, CLI } from './build.mjs';
import { writeNpy } from './npy.mjs';

build();
const G = await import('./graphs.mjs');

let dir, residual, wide;
const cli = (...args) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

/** `n` .npy samples of shape `dims` in a new directory `name`, values seeded by `seed`. */
function npyDir(name, n, dims, seed) {
  const d = path.join(dir, name);
  fs.mkdirSync(d, { recursive: true });
  const r = G.rng(seed), size = dims.reduce((a, b) => a * b, 1);
  for (let i = 0; i < n; i++) writeNpy(path.join(d, `s${i}.npy`), Float32Array.from({ length: size }, () => r()), dims);
  return d;
}

before(() => {
  dir = G.tmpDir('sk-fid-cli-');
  residual = path.join(dir, 'residual.onnx');
  fs.writeFileSync(residual, G.residual());
  // x (1, 256) -> Gemm (256 -> 256) -> Softmax -> probs: 256 KiB of float32 weights
  wide = path.join(dir, 'wide.onnx');
  fs.writeFileSync(wide, G.makeModel({
    inputs: [['x', [1, 256]]], outputs: [['probs', [1, 256]]],
    inits: { W: { dims: [256, 256] }, b: { dims: [256], scale: 0.1 } },
    nodes: [['Gemm', ['x', 'W', 'b'], ['z'], { transB: 1 }], ['Softmax', ['z'], ['probs'], { axis: -1 }]],
  }));
});

test('--eval DIR: the fidelity table, the summary line and the report; --metric sets a kind', () => {
  const evalDir = npyDir('eval-a', 6, [1, 4, 8, 8], 11);
  const out = path.join(dir, 'r-eval.onnx');
  const r = cli('prune', residual, '-o', out, '--sparsity', '0.5', '--eval', evalDir, '--report', out + '.json', '-q');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /fidelity to the original on 6 held-out samples from /);
  assert.match(r.out, /\by\s+generic\s+\d\.\d{4}\s+cosine /);
  assert.match(r.out, /^fidelity \d\.\d{4} \(worst output: y, generic\); all-outputs cosine \d\.\d{4}$/m);
  const rep = JSON.parse(fs.readFileSync(out + '.json', 'utf8'));
  assert.equal(rep.fidelity.samples, 6);
  assert.equal(rep.fidelity.source, evalDir);
  assert.equal(rep.fidelity.outputs.length, 1);
  assert.equal(rep.fidelity.worst, 'y');
  assert.ok(rep.fidelity.score > 0 && rep.fidelity.score < 1, String(rep.fidelity.score));
  assert.ok(rep.fidelity.score <= rep.fidelity.outputs[0].metrics.cosine);
  // the same run with the output read as class scores (logits)
  const r2 = cli('prune', residual, '-o', out, '--sparsity', '0.5', '--eval', evalDir, '--metric', 'y=classification', '--report', out + '.json', '-q');
  assert.equal(r2.code, 0, r2.err);
  const rep2 = JSON.parse(fs.readFileSync(out + '.json', 'utf8'));
  assert.equal(rep2.fidelity.outputs[0].kind, 'classification');
  assert.equal(rep2.fidelity.outputs[0].score, rep2.fidelity.outputs[0].metrics.top1Agreement);
  assert.match(r2.out, /top-1 \d+\.\d%, top-5/);
});

test('--eval synthetic, and the default held-out set of a calibrated run with generated calibration', () => {
  const out = path.join(dir, 'w-syn.onnx');
  const r = cli('prune', wide, '-o', out, '--sparsity', '0.5', '--eval', 'synthetic', '--report', out + '.json', '-q');
  assert.equal(r.code, 0, r.err);
  const rep = JSON.parse(fs.readFileSync(out + '.json', 'utf8'));
  assert.equal(rep.fidelity.source, 'synthetic');
  assert.equal(rep.fidelity.samples, 8);
  assert.equal(rep.fidelity.outputs[0].kind, 'classification');
  const c = cli('prune', wide, '-o', out, '--sparsity', '0.5', '--method', 'wanda', '--calib-count', '4', '--report', out + '.json', '-q');
  assert.equal(c.code, 0, c.err);
  assert.equal(JSON.parse(fs.readFileSync(out + '.json', 'utf8')).fidelity.source, 'synthetic');
  // magnitude without --eval: not measured, and said so
  const m = cli('prune', wide, '-o', out, '--sparsity', '0.5', '-q');
  assert.equal(m.code, 0, m.err);
  assert.match(m.out, /fidelity not measured: --eval DIR/);
});

test('--eval sharing samples with --calib, bad --metric: exit 2, one line, no output file', () => {
  const calib = npyDir('calib-b', 4, [1, 4, 8, 8], 21);
  const other = npyDir('eval-b', 3, [1, 4, 8, 8], 22);
  const linked = path.join(dir, 'eval-linked');
  fs.mkdirSync(linked);
  fs.symlinkSync(path.join(calib, 's1.npy'), path.join(linked, 'x.npy'));
  const copied = path.join(dir, 'eval-copied');
  fs.mkdirSync(copied);
  fs.copyFileSync(path.join(calib, 's2.npy'), path.join(copied, 'y.npy'));
  const sg = ['--sparsity', '0.5', '--method', 'sparsegpt', '--calib', calib];
  const cases = [
    [[...sg, '--eval', calib], /--eval and --calib name the same directory/],
    // shared samples are found by their contents, all inputs of a sample together
    [[...sg, '--eval', linked], /held-out sample .*x\.npy.* is a copy of calibration sample .*s1\.npy/],
    [[...sg, '--eval', copied], /held-out sample .*y\.npy.* is a copy of calibration sample .*s2\.npy/],
    [['--sparsity', '0.5', '--metric', 'y=classification'], /--metric applies when fidelity is measured/],
    [['--sparsity', '0.5', '--eval', other, '--metric', 'y=boxes'], /the kind is one of classification, detection, dense-map, sequence, language-model, embedding, generic/],
    [['--sparsity', '0.5', '--eval', other, '--metric', 'z=generic'], /no output "z"/],
    [['--sparsity', '0.5', '--eval', other, '--metric', 'y'], /--metric takes OUTPUT=KIND/],
    [['--sparsity', '0.5', '--eval', ''], /--eval needs a directory/],
  ];
  for (const [args, msg] of cases) {
    const out = path.join(dir, 'refused.onnx');
    const r = cli('prune', residual, '-o', out, ...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, msg);
    assert.equal(r.err.trim().split('\n').length, 1, r.err);
    assert.ok(!fs.existsSync(out), args.join(' '));
  }
  // disjoint directories are accepted
  const ok = cli('prune', residual, '-o', path.join(dir, 'ok.onnx'), ...sg, '--eval', other, '-q');
  assert.equal(ok.code, 0, ok.err);
  // a bad --eval directory: exit 1 (as a bad --calib), no output
  const bad = cli('prune', residual, '-o', path.join(dir, 'bad.onnx'), '--sparsity', '0.5', '--eval', path.join(dir, 'none'));
  assert.equal(bad.code, 1);
  assert.match(bad.err, /--eval: directory .* no such directory/);
  assert.ok(!fs.existsSync(path.join(dir, 'bad.onnx')));
});

test('transport size: gzip and brotli of the written files in the report and the summary; zeros travel smaller', () => {
  const dense = path.join(dir, 'w0.onnx'), half = path.join(dir, 'w50.onnx');
  const r0 = cli('prune', wide, '-o', dense, '--sparsity', '0', '--report', dense + '.json', '-q');
  const r5 = cli('prune', wide, '-o', half, '--sparsity', '0.5', '--report', half + '.json', '-q');
  assert.equal(r0.code, 0, r0.err);
  assert.equal(r5.code, 0, r5.err);
  const f0 = JSON.parse(fs.readFileSync(dense + '.json', 'utf8')).files, f5 = JSON.parse(fs.readFileSync(half + '.json', 'utf8')).files;
  const bytes = fs.readFileSync(half);
  assert.equal(f5.bytesAfter, bytes.length);
  // 256 KiB: estimated (exact only up to 64 KiB), within the tolerance the report states
  assert.equal(f5.estimated, true);
  assert.ok(f5.tolerance, f5.method);
  const gz = zlib.gzipSync(bytes, { level: 9 }).length;
  assert.ok(Math.abs(f5.gzipAfter - gz) <= f5.tolerance.gzip * gz, `${f5.gzipAfter} vs ${gz}`);
  const br = zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  assert.ok(Math.abs(f5.brotliAfter - br) <= f5.tolerance.brotli * br, `${f5.brotliAfter} vs ${br}`);
  assert.equal(f5.brotliQuality, 11);
  // the input's sizes too; random float32 weights barely compress, half of them zero nearly halves the transfer
  const gzIn = zlib.gzipSync(fs.readFileSync(wide), { level: 9 }).length;
  assert.ok(Math.abs(f5.gzipBefore - gzIn) <= f5.tolerance.gzip * gzIn, `${f5.gzipBefore} vs ${gzIn}`);
  assert.ok(f0.gzipAfter > 0.85 * f0.bytesAfter, `${f0.gzipAfter} / ${f0.bytesAfter}`);
  assert.ok(f5.gzipAfter < 0.65 * f0.gzipAfter, `${f5.gzipAfter} vs ${f0.gzipAfter}`);
  assert.ok(f5.brotliAfter < 0.65 * f0.brotliAfter, `${f5.brotliAfter} vs ${f0.brotliAfter}`);
  assert.match(r5.out, /file [\d.]+ KiB -> [\d.]+ KiB \(gzip ≈[\d.]+ KiB -> ≈[\d.]+ KiB, brotli ≈[\d.]+ KiB -> ≈[\d.]+ KiB, estimated within \d+%\)/);
});
