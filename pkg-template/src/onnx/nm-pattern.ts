// N:M patterns as every face writes them ("2:4", [2, 4]): one parser and one check, so the CLI, the
// job, one-shot pruning and the playground accept the same patterns (1 <= n <= m).
import { JobError } from './errors.js';

const isPosInt = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 1;

/** Two positive integers ([n, m], a block shape), or a JobError naming `option`. */
export function pair(option: string, x: unknown, code: string): asserts x is [number, number] {
  if (!Array.isArray(x) || x.length !== 2 || !x.every(isPosInt)) throw new JobError(option, `must be two positive integers (got ${JSON.stringify(x)})`, code);
}

/** N:M with 1 <= n <= m (n = m keeps everything: a valid, if idle, request). */
export function checkNm(option: string, nm: unknown): asserts nm is [number, number] {
  pair(option, nm, 'invalid_nm_pattern');
  if (nm[0] > nm[1]) throw new JobError(option, `must be N:M with 1 <= N <= M, e.g. 2:4 (got ${nm[0]}:${nm[1]})`, 'invalid_nm_pattern');
}

/** Parses "2:4" into [2, 4] (keep n of every m), checked as checkNm. */
export function parseNm(s: string, option = 'nm'): [number, number] {
  const m = /^(\d+):(\d+)$/.exec(String(s).trim());
  if (!m) throw new JobError(option, `must be N:M with 1 <= N <= M, e.g. 2:4 (got "${s}")`, 'invalid_nm_pattern');
  const nm: [number, number] = [Number(m[1]), Number(m[2])];
  checkNm(option, nm);
  return nm;
}

