// The CLI's threads: calibration and training run on the package's threaded build (rayon over
// worker_threads) with one worker per core; SPARSEKIT_THREADS=N sets the workers, 1 keeps the
// single-threaded build. The results are the same bits either way. Unset, models under
// MIN_THREADED_BYTES stay single-threaded: on this 2-vCPU machine the pool's start (1.5 s, the
// threaded build compiled by V8's optimizing tier) and the small Hessians' poor split made PaddleOCR
// det's calibrated prune slower with threads (16.5 s against 13.3 s; bench/RESULTS.md, "Threads in
// Node"); the gains are on the large Hessians and solves of language models.
import fs from 'node:fs';
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { initThreadPool } from 'sparsekit-wasm';
import { PROG, UsageError } from './errors.js';

/** The footer of the help of the commands that use threads. */
export const THREADS_HELP = `Environment:
  SPARSEKIT_THREADS=N   workers for calibration and training (default: one per core for models of
                        64 MiB or more, with their external data; 1: single-threaded)`;

/** Below this many bytes on disk (the model and its external data), threads only if asked for. */
export const MIN_THREADED_BYTES = 64 * 1024 * 1024;

/**
 * The model's bytes on disk: the .onnx file and the files beside it named after it (external
 * data: `model.onnx.data`, `model.onnx_data`, `model.onnx_data_1`, …). Read before the model is
 * loaded, as the pool must start before the first object.
 * @param {string} file
 */
function bytesOnDisk(file) {
  const dir = path.dirname(file), base = path.basename(file);
  let n = 0;
  for (const f of fs.readdirSync(dir)) {
    if (f === base || (f.startsWith(base) && /^[._]data/.test(f.slice(base.length)))) n += fs.statSync(path.join(dir, f)).size;
  }
  return n;
}

/**
 * Starts the workers before the job makes its first object (the build is chosen then).
 * @param {string} model the model file the command reads
 */
export async function useThreads(model) {
  const given = process.env.SPARSEKIT_THREADS;
  const asked = given !== undefined && given !== '';
  const n = asked ? Number(given) : availableParallelism();
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`SPARSEKIT_THREADS must be a positive integer (got "${given}")`);
  if (n < 2 || (!asked && bytesOnDisk(model) < MIN_THREADED_BYTES)) return;
  if (!(await initThreadPool(n))) console.error(`${PROG}: threads could not start here; running single-threaded (same results)`);
}
