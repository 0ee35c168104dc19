// The calibration pipeline of sparsekit-wasm/onnx on small generated graphs: input generation,
// .npy / PNG samples and the directory layout, layer discovery (MatMul transposed views, grouped
// convs, float16 weights behind Cast), option checks that change nothing, fallbacks, cancellation.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';
import { writeNpy } from './npy.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');
const runner = O.makeOrtRunner(ort, { intraOpNumThreads: 1 });

let dir;
before(() => { dir = G.tmpDir('sk-calib-'); });

/** x (1,3,16,16) image -> conv (8) -> Relu -> conv (8 -> 4, 1x1) -> y */
const imageModel = () => G.makeModel({
  inputs: [['x', [1, 3, 16, 16]]], outputs: [['y', [1, 4, 16, 16]]],
  inits: { 'c1.w': { dims: [8, 3, 3, 3] }, 'c2.w': { dims: [4, 8, 1, 1] } },
  nodes: [['Conv', ['x', 'c1.w'], ['a'], { pads: [1, 1, 1, 1] }], ['Relu', ['a'], ['r']], ['Conv', ['r', 'c2.w'], ['y']]],
});

/** Two inputs: x (1,6,16) float and ids (1,6) int64 (gathered rows added to x) -> MatMul W (16, 8) -> y */
const twoInputs = () => G.makeModel({
  inputs: [['x', [1, 6, 16]], ['ids', [1, 6], 7]], outputs: [['y', [1, 6, 8]]],
  inits: { E: { dims: [10, 16] }, W: { dims: [16, 8] } },
  nodes: [['Gather', ['E', 'ids'], ['e']], ['Add', ['x', 'e'], ['s']], ['MatMul', ['s', 'W'], ['y']]],
});

test('generated sets: deterministic by seed, calibration and held-out disjoint, types from the graph', () => {
  const m = O.OnnxModel.parse(twoInputs());
  const a = O.makeInputSet(m, { count: 3 }), b = O.makeInputSet(m, { count: 3 }), h = O.makeInputSet(m, { count: 3, set: 'heldOut' });
  assert.deepEqual(a, b);
  assert.equal(a[0].feeds.ids.type, 'int64');
  assert.ok(a[0].feeds.ids.data instanceof BigInt64Array && a[0].feeds.ids.data.every((v) => v >= 0n && v < 1000n));
  assert.deepEqual(a[0].feeds.x.dims, [1, 6, 16]);
  for (const x of a) for (const y of h) assert.notDeepEqual(x.feeds.x.data, y.feeds.x.data);
  // a byte bound is checked from the shapes: exactly three samples' bytes pass, one byte less is refused
  const each = Object.values(a[0].feeds).reduce((n, t) => n + t.data.byteLength, 0);
  assert.deepEqual(O.makeInputSet(m, { count: 3, maxBytes: 3 * each }), a);
  assert.throws(() => O.makeInputSet(m, { count: 3, maxBytes: 3 * each - 1 }), (e) => e.reason === 'too_large' && /3 generated samples would hold .* MiB of inputs; .*\(2 of these\)/.test(e.message));
  const img = O.OnnxModel.parse(imageModel());
  const pages = O.makeInputSet(img, { count: 1 })[0].feeds.x, generic = O.makeInputSet(img, { count: 1, generator: 'generic' })[0].feeds.x;
  assert.notDeepEqual(pages.data, generic.data);
  assert.ok(pages.data.every((v) => v >= -2.2 && v <= 2.7), 'a normalised page');
  assert.deepEqual(O.resolveInputShape({ name: 'x', elemType: 1, dims: ['N', 3, 'H', 'W'] }, [{ name: 'y', elemType: 1, dims: ['N', 1, 'H', 'W'] }]), [1, 3, 320, 320]);
  assert.deepEqual(O.resolveInputShape({ name: 'x', elemType: 1, dims: ['N', 3, 48, 'W'] }, [{ name: 'y', elemType: 1, dims: ['N', 2] }]), [1, 3, 48, 192]);
});

test('.npy: float32 / float16 / int64 decoded and converted to the input type; bad files refused', () => {
  const f = path.join(dir, 'a.npy');
  writeNpy(f, Float32Array.from([1.5, -2, 0.25, 3]), [2, 2]);
  const a = O.parseNpy(fs.readFileSync(f));
  assert.deepEqual([a.dtype, a.shape, Array.from(a.data)], ['f4', [2, 2], [1.5, -2, 0.25, 3]]);
  const half = O.npyToFeed(a, 10);
  assert.equal(half.type, 'float16');
  assert.deepEqual(Array.from(O.halfArrayToFloat(half.data)), [1.5, -2, 0.25, 3]);
  writeNpy(f, Uint16Array.from([0x3c00, 0xc000]), [2], '<f2');
  assert.deepEqual(Array.from(O.npyToFeed(O.parseNpy(fs.readFileSync(f)), 1).data), [1, -2]);
  writeNpy(f, BigInt64Array.from([3n, 7n]), [1, 2]);
  const ids = O.npyToFeed(O.parseNpy(fs.readFileSync(f)), 7);
  assert.deepEqual([ids.type, Array.from(ids.data)], ['int64', [3n, 7n]]);
  assert.throws(() => O.npyToFeed(O.parseNpy(fs.readFileSync(f)), 1), /integer data \('i8'\) for a float32 input/);
  const bytes = fs.readFileSync(f);
  assert.throws(() => O.parseNpy(bytes.subarray(0, bytes.length - 3)), (e) => e.reason === 'bad_calibration' && /truncated/.test(e.message));
  assert.throws(() => O.parseNpy(new TextEncoder().encode('hello world, not numpy')), /not a \.npy file/);
  writeNpy(f, Float32Array.from([1, 2]), [2], '>f4');
  assert.throws(() => O.parseNpy(fs.readFileSync(f)), /dtype '>f4' is not handled/);
});

/** A PNG of an RGB(A) image, each row with filter (row % 5), written with node:zlib. */
function png(w, h, channels, px) {
  const crcTable = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
  const crc = (b) => { let c = 0xffffffff; for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
  const chunk = (type, data) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0); out.write(type, 4, 'latin1'); Buffer.from(data).copy(out, 8);
    out.writeUInt32BE(crc(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const stride = w * channels, raw = Buffer.alloc(h * (stride + 1));
  for (let y = 0; y < h; y++) {
    const f = y % 5; raw[y * (stride + 1)] = f;
    for (let x = 0; x < stride; x++) {
      const cur = px[y * stride + x], a = x >= channels ? px[y * stride + x - channels] : 0, b = y ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y ? px[(y - 1) * stride + x - channels] : 0;
      const q = a + b - c, pa = Math.abs(q - a), pb = Math.abs(q - b), pc = Math.abs(q - c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f];
      raw[y * (stride + 1) + 1 + x] = (cur - pred) & 0xff;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = channels === 4 ? 6 : 2;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

test('PNG: every scanline filter decodes to the source pixels; resize keeps a same-size image', () => {
  const w = 7, h = 11;
  const px = Uint8Array.from({ length: w * h * 3 }, (_, i) => (i * 37 + (i >> 3) * 11) & 0xff);
  const img = O.decodePng(png(w, h, 3, px), (z) => zlib.inflateSync(z));
  assert.deepEqual([img.w, img.h], [w, h]);
  for (let i = 0; i < w * h; i++) {
    assert.deepEqual([img.rgba[4 * i], img.rgba[4 * i + 1], img.rgba[4 * i + 2], img.rgba[4 * i + 3]], [px[3 * i], px[3 * i + 1], px[3 * i + 2], 255]);
  }
  assert.deepEqual(Array.from(O.resizeRgba(img, h, w).rgba), Array.from(img.rgba));
  assert.throws(() => O.decodePng(png(w, h, 3, px).subarray(0, 40), (z) => zlib.inflateSync(z)), /truncated|corrupt/);
});

test('readCalibrationDir: one file per sample, PNG images, a folder per sample for several inputs; mistakes refused', async () => {
  const img = O.OnnxModel.parse(imageModel());
  const d1 = path.join(dir, 'imgs');
  fs.mkdirSync(d1);
  writeNpy(path.join(d1, 'a.npy'), new Float32Array(3 * 16 * 16).fill(0.5), [1, 3, 16, 16]);
  fs.writeFileSync(path.join(d1, 'b.png'), png(32, 20, 4, Uint8Array.from({ length: 32 * 20 * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * 7) & 0xff))));
  fs.writeFileSync(path.join(d1, 'notes.txt'), 'ignored');
  const s = await O.readCalibrationDir(d1, img);
  assert.deepEqual(s.map((x) => x.source), ['a.npy', 'b.png']);
  assert.deepEqual(s[1].feeds.x.dims, [1, 3, 16, 16]);
  assert.equal((await O.readCalibrationDir(d1, img, { limit: 1 })).length, 1);

  const two = O.OnnxModel.parse(twoInputs());
  const d2 = path.join(dir, 'two');
  for (const k of ['s0', 's1']) {
    fs.mkdirSync(path.join(d2, k), { recursive: true });
    writeNpy(path.join(d2, k, 'x.npy'), new Float32Array(6 * 16).fill(1), [1, 6, 16]);
    writeNpy(path.join(d2, k, 'ids.npy'), BigInt64Array.from({ length: 6 }, (_, i) => BigInt(i)), [1, 6]);
  }
  const t = await O.readCalibrationDir(d2, two);
  assert.equal(t.length, 2);
  assert.equal(t[0].feeds.ids.type, 'int64');
  const rep = await O.calibratePrune(two, { ort: runner, calibration: t, criterion: 'wanda', sparsity: 0.5 });
  assert.equal(rep.layers[0].method, 'wanda');
  await assert.rejects(O.readCalibrationDir(d1, two), /2 inputs .*one <input>\.npy per input/);
  fs.rmSync(path.join(d2, 's1', 'ids.npy'));
  await assert.rejects(O.readCalibrationDir(d2, two), (e) => e.code === 'invalid_value' && /s1.ids\.npy is missing/.test(e.message));
  await assert.rejects(O.readCalibrationDir(path.join(dir, 'none'), two), /no such directory/);
});

test('findLayers: transposed MatMul views, grouped convs, ConvTranspose, float16 weights behind Cast; capture groups', () => {
  const mlp = O.findLayers(O.OnnxModel.parse(G.mlp()));
  assert.deepEqual(mlp.map((l) => [l.name, l.rows, l.cols, l.transposed, l.stats, l.dependsOn]), [['W1', 32, 16, true, 'rows', -1], ['W2', 8, 32, true, 'rows', 0]]);
  assert.equal(O.captureGroups(mlp).length, 2);
  assert.equal(O.captureGroups(mlp, false).length, 1);
  const dw = O.findLayers(O.OnnxModel.parse(G.depthwise()));
  assert.deepEqual(dw.map((l) => [l.stats, l.group]), [['conv', 1], ['grouped', 8], ['conv', 1]]);
  const ct = O.findLayers(O.OnnxModel.parse(G.convTranspose()));
  assert.deepEqual(ct.map((l) => l.stats), ['conv', null, 'conv']);
  const fp16 = O.findLayers(O.OnnxModel.parse(G.residual('fp16')));
  assert.equal(fp16.length, 4);
  assert.ok(fp16.every((l) => l.weight.dtypeName === 'float16'));
});

test('calibratePrune: refused options change no weight; float16 weights; one pass vs sequential; cancel', async () => {
  const bytes = G.residual('fp16');
  const m = O.OnnxModel.parse(bytes);
  const calibration = O.makeInputSet(m, { count: 8 });
  const snapshot = () => m.prunable().map((w) => Array.from(m.readFloat(w)));
  const before = snapshot();
  for (const [opts, code] of [[{ sparsity: 1.5 }, 'invalid_sparsity'], [{ nm: [5, 4] }, 'invalid_nm_pattern'], [{ sparsity: 0.5, nm: [2, 4] }, 'invalid_arguments'],
    [{ sparsity: 0.5, criterion: 'obs' }, 'invalid_arguments'], [{ sparsity: 0.5, percDamp: -1 }, 'invalid_arguments'], [{ nm: [4, 16] }, 'invalid_nm_shape'],
    [{ sparsity: 0.5, refit: -1 }, 'invalid_arguments'], [{ sparsity: 0.5, refit: 2.5 }, 'invalid_arguments']]) {
    await assert.rejects(O.calibratePrune(m, { ort, calibration, ...opts }), (e) => e.code === code, JSON.stringify(opts));
  }
  await assert.rejects(O.calibratePrune(m, { ort, calibration: [], sparsity: 0.5 }), (e) => e.code === 'invalid_arguments');
  assert.deepEqual(snapshot(), before);

  const seq = await O.calibratePrune(m, { ort, sessionOptions: { logSeverityLevel: 3 }, calibration, sparsity: 0.5 });
  // four capture groups; the first layer's input is the graph input, which needs no segment run
  assert.equal(seq.passes, 3);
  const out = O.OnnxModel.parse(m.encode());
  for (const l of seq.layers) {
    assert.equal(out.readFloat(out.weight(l.name)).filter((v) => v === 0).length, l.zeros, `${l.name}: zeros counted after float16 rounding`);
    assert.ok(l.relError > 0 && l.relError < 1);
  }
  // SparseGPT's refit (on by default) reaches the layers: the first layer (the graph input: the same
  // statistics in both runs) keeps SparseGPT's mask with refit 0 or 16, and its error is lower with it
  assert.equal(seq.options.refit, 16);
  const mp = O.OnnxModel.parse(bytes);
  const plain = await O.calibratePrune(mp, { ort: runner, calibration, sparsity: 0.5, refit: 0 });
  assert.equal(plain.options.refit, 0);
  const l0 = seq.layers[0].name;
  assert.ok(seq.layers[0].relError < plain.layers[0].relError, `${seq.layers[0].relError} vs ${plain.layers[0].relError}`);
  const zeros = (w) => Array.from(w, (v) => v === 0);
  assert.deepEqual(zeros(out.readFloat(out.weight(l0))), zeros(mp.readFloat(mp.weight(l0))));
  const one = await O.calibratePrune(O.OnnxModel.parse(bytes), { ort: runner, calibration, sparsity: 0.5, sequential: false, criterion: (l) => (l.op === 'Gemm' ? 'dense' : 'wanda') });
  assert.equal(one.passes, 1);
  assert.deepEqual(one.layers.map((l) => l.method), ['wanda', 'wanda', 'wanda']);

  const ctl = new AbortController();
  const m2 = O.OnnxModel.parse(bytes);
  const w2 = m2.prunable().map((w) => Array.from(m2.readFloat(w)));
  let pruned = 0;
  await assert.rejects(O.calibratePrune(m2, { ort: runner, calibration, sparsity: 0.5, signal: ctl.signal, onProgress: (p) => { pruned = p.done; if (p.done >= 2) ctl.abort(); } }),
    (e) => e instanceof O.CancelledError && e.code === 'cancelled');
  assert.ok(pruned >= 2, 'cancelled after layers were pruned');
  assert.deepEqual(m2.prunable().map((w) => Array.from(m2.readFloat(w))), w2, 'a cancelled run puts the weights back');
});

test('PNG samples of a dense-prediction model with dynamic height and width keep their own size (rounded to 32, long side <= 960); a huge header is refused before decoding', async () => {
  const d = path.join(dir, 'own-size');
  fs.mkdirSync(d);
  const rgba = (w, h) => Uint8Array.from({ length: w * h * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * 13) & 0xff));
  fs.writeFileSync(path.join(d, 'a.png'), png(100, 50, 4, rgba(100, 50)));
  fs.writeFileSync(path.join(d, 'b.png'), png(2000, 40, 4, rgba(2000, 40)));
  const dense = O.OnnxModel.parse(G.makeModel({
    inputs: [['x', ['N', 3, 'H', 'W']]], outputs: [['y', ['N', 1, 'H', 'W']]],
    inits: { w: { dims: [1, 3, 1, 1] } }, nodes: [['Conv', ['x', 'w'], ['y']]],
  }));
  const s = await O.readCalibrationDir(d, dense);
  assert.deepEqual(s.map((x) => x.feeds.x.dims), [[1, 3, 64, 96], [1, 3, 32, 960]]);
  assert.deepEqual(O.pngShape(dense.inputs[0], dense, { h: 50, w: 100 }), [1, 3, 64, 96]);
  // A fixed side stays; a classifier gets resolveInputShape's size.
  const halfFixed = O.OnnxModel.parse(G.makeModel({
    inputs: [['x', [1, 3, 48, 'W']]], outputs: [['y', [1, 1, 48, 'W']]],
    inits: { w: { dims: [1, 3, 1, 1] } }, nodes: [['Conv', ['x', 'w'], ['y']]],
  }));
  assert.deepEqual(O.pngShape(halfFixed.inputs[0], halfFixed, { h: 50, w: 100 }), [1, 3, 48, 96]);
  const huge = png(1, 1, 3, new Uint8Array(3));
  huge.writeUInt32BE(1 << 14, 16); huge.writeUInt32BE(1 << 14, 20); // IHDR: 16384 × 16384, CRC left stale
  assert.throws(() => O.decodePng(huge, (z) => zlib.inflateSync(z)), /more than the 67108864/);
});

test('maskFromScores keeps what a stable sort by score keeps (ties: the lower index), per row, per N:M group and per layer', () => {
  const r = G.rng(5);
  for (const tied of [false, true]) {
    const sc = Float32Array.from({ length: 32 * 24 }, () => (tied ? Math.round(r() * 4) : r()));
    for (const [target, perRow] of [[{ sparsity: 0.5 }, true], [{ sparsity: 0.3 }, true], [{ nm: [2, 4] }, true], [{ sparsity: 0.6 }, false], [{ sparsity: 0 }, true], [{ sparsity: 1 }, true]]) {
      const m = O.maskFromScores(sc, 32, 24, target, perRow);
      const ref = new Uint8Array(sc.length);
      const groups = target.nm ? Array.from({ length: 32 * 6 }, (_, g) => [g * 4, 4, 2])
        : perRow ? Array.from({ length: 32 }, (_, row) => [row * 24, 24, Math.floor((1 - target.sparsity) * 24 + 0.5)])
          : [[0, sc.length, Math.floor((1 - target.sparsity) * sc.length + 0.5)]];
      for (const [b, len, k] of groups) {
        const idx = Array.from({ length: len }, (_, i) => b + i).sort((x, y) => sc[y] - sc[x] || x - y);
        for (let i = 0; i < k; i++) ref[idx[i]] = 1;
      }
      assert.deepEqual(m, ref, `${tied ? 'tied' : 'distinct'} ${JSON.stringify(target)} ${perRow ? 'per row' : 'per layer'}`);
    }
  }
});

test('a model read from a file: its weights written in place, the ones from before in the spill; a cancelled run puts them back', async () => {
  const bytes = G.residual();
  const file = path.join(dir, 'in-place.onnx');
  fs.writeFileSync(file, bytes);
  const calibration = O.makeInputSet(O.OnnxModel.parse(bytes), { count: 6 });
  const opts = { ort: runner, calibration, sparsity: 0.5, percDamp: 0.01, minVectors: 0 };
  const mem = O.OnnxModel.parse(bytes);
  await O.calibratePrune(mem, opts);
  const m = await O.loadOnnx(file);
  const arrays = m.prunable().map((w) => w.tensor.raw_data);
  const before = m.prunable().map((w) => Array.from(m.readFloat(w)));
  await O.calibratePrune(m, opts);
  assert.ok(m.prunable().every((w, i) => w.tensor.raw_data === arrays[i]), 'each weight written into the array it had (a view of the file\'s bytes)');
  assert.equal(Buffer.compare(Buffer.from(m.encode()), Buffer.from(mem.encode())), 0, 'the same bytes as the run on a model parsed from memory');
  const ctl = new AbortController();
  const m2 = await O.loadOnnx(file);
  await assert.rejects(O.calibratePrune(m2, { ...opts, signal: ctl.signal, onProgress: (p) => { if (p.done >= 2) ctl.abort(); } }), (e) => e.code === 'cancelled');
  assert.deepEqual(m2.prunable().map((w) => Array.from(m2.readFloat(w))), before, 'a cancelled run puts the weights back from the spill');
  assert.equal(Buffer.compare(Buffer.from(m2.encode()), Buffer.from(bytes)), 0);
});
