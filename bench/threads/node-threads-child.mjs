// One build of the package in its own process, for bench/threads/node-threads.mjs: argv[2] is
// 'mt' (initThreadPool(2)) or 'st' (the single-threaded build, as imported). It prepares the
// cells' inputs once, then times the cell each message names and answers with the milliseconds.
import * as sk from '../../pkg/src/node.js';

const mode = process.argv[2];
const workers = mode === 'mt' ? Number(process.argv[3] ?? 2) : 1;
const t0 = performance.now();
const active = mode === 'mt' ? await sk.initThreadPool(workers) : false;
const startMs = performance.now() - t0;
if (mode === 'mt' && !active) throw new Error('the threaded build did not start');

let s = 12345;
const rand = (n) => {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) { s = (s * 1103515245 + 12345) >>> 0; a[i] = s / 2 ** 32 - 0.5; }
  return a;
};
const ROWS = 8192;
const x = new Map([576, 1536].map((c) => [c, rand(ROWS * c)]));
/** The Hessians SparseGPT reads (one per input width) and the weights it starts from. */
const hess = new Map([...x].map(([c, xs]) => { const h = new sk.Hessian(c); h.addRows(xs, ROWS); return [c, h]; }));
const weights = new Map([[576, rand(1536 * 576)], [1536, rand(576 * 1536)]]);

const CELLS = {
  /** X^T X over 8192 rows of `cols` inputs. */
  hessian: (cols) => {
    const h = new sk.Hessian(cols);
    const t = performance.now();
    h.addRows(x.get(cols), ROWS);
    const ms = performance.now() - t;
    h.free();
    return ms;
  },
  /** SparseGPT 50% of a [rows, cols] weight (cols inputs: 576 -> [1536, 576], 1536 -> [576, 1536]). */
  sparsegpt: (cols) => {
    const w = sk.Param.fromArray(weights.get(cols), [cols === 576 ? 1536 : 576, cols]);
    const t = performance.now();
    sk.sparseGpt(w, hess.get(cols), { sparsity: 0.5 });
    const ms = performance.now() - t;
    w.free();
    return ms;
  },
};

process.on('message', ({ cell, cols }) => process.send({ ms: CELLS[cell](cols) }));
process.send({ ready: true, mode, variant: sk.variant(), numThreads: sk.numThreads(), startMs });
