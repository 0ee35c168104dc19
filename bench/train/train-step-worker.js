// Bench only (bench/train/train-step.mjs --browser): a Web Worker that loads the package's browser build
// (threads: the threaded build with a 2-worker rayon pool where the page is cross-origin isolated;
// else the SIMD build), builds Trainers from graphs dumped by bench/train/train-dump.mjs, and times steps.
import init, * as sk from '../../pkg/src/browser.js';

const trainers = {};
onmessage = async (e) => {
  const m = e.data;
  try {
    if (m.cmd === 'init') {
      await init({ threads: m.threads });
      const active = m.threads ? await sk.initThreadPool(m.nthreads) : false;
      postMessage({ variant: sk.variant(), active, numThreads: sk.numThreads() });
    } else if (m.cmd === 'load') {
      const meta = await (await fetch(`/graphs/${m.name}.json`)).json();
      const bin = await (await fetch(`/graphs/${m.name}.bin`)).arrayBuffer();
      const initializers = meta.inits.map((t) => ({
        name: t.name, dims: t.dims,
        values: t.float ? new Float32Array(bin.slice(t.offset, t.offset + 4 * t.len)) : Float64Array.from(new BigInt64Array(bin.slice(t.offset, t.offset + 8 * t.len)), Number),
      }));
      const tr = new sk.Trainer({ ...meta.spec, initializers }, { lr: 1e-4, masked: false });
      const n = m.shape.reduce((a, b) => a * b, 1);
      let s = 3;
      const rand = () => Float32Array.from({ length: n }, () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return (s / 2 ** 32) * 2; });
      const x = [{ values: rand(), shape: m.shape }];
      const target = tr.forward([{ values: rand(), shape: m.shape }]).map((o) => o.values);
      tr.step(x, target); // warm-up
      trainers[m.name] = { tr, x, target };
      postMessage({ ok: true });
    } else if (m.cmd === 'step') {
      const { tr, x, target } = trainers[m.name];
      const ms = [];
      for (let k = 0; k < m.reps; k++) {
        const t = performance.now();
        tr.step(x, target);
        ms.push(performance.now() - t);
      }
      postMessage({ ms });
    }
  } catch (err) {
    postMessage({ error: String(err && err.stack || err) });
  }
};
