// The CLI's threads: calibration and training run on the package's threaded build (rayon over
// worker_threads) with one worker per core; SPARSEKIT_THREADS=N sets the workers, 1 keeps the
// single-threaded build. The results are the same bits either way.
import { availableParallelism } from 'node:os';
import { initThreadPool } from 'sparsekit-wasm';
import { PROG, UsageError } from './errors.js';

/** The footer of the help of the commands that use threads. */
export const THREADS_HELP = `Environment:
  SPARSEKIT_THREADS=N   workers for calibration and training (default: one per core; 1: single-threaded)`;

/** Starts the workers before the job makes its first object (the build is chosen then). */
export async function useThreads() {
  const given = process.env.SPARSEKIT_THREADS;
  const n = given === undefined || given === '' ? availableParallelism() : Number(given);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`SPARSEKIT_THREADS must be a positive integer (got "${given}")`);
  if (n < 2) return;
  if (!(await initThreadPool(n))) console.error(`${PROG}: threads could not start here; running single-threaded (same results)`);
}
