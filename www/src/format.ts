// Number formats and the parsers of the layer table's fields.
import { parseNm } from 'sparsekit-wasm/onnx';

export const fmtInt = (n: number): string => n.toLocaleString('en-US');
export const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

export function fmtBytes(n: number | null | undefined): string {
  if (n == null) return '—';
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(2)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

/** 4 significant digits, exponent form outside [1e-3, 1000). */
export function fmtNum(x: number): string {
  if (x === 0) return '0';
  const a = Math.abs(x);
  return a >= 1000 || a < 1e-3 ? x.toExponential(3) : x.toPrecision(4);
}

/** "4x4", "1xall", "all" (with allowAll: -1 stands for the whole dim) -> [a, b], or null. */
export function parsePair(s: string, allowAll: boolean): [number, number] | null {
  const parts = String(s).trim().toLowerCase().split(/\s*[x×,]\s*/);
  const isAll = (p: string) => allowAll && (p === 'all' || p === '-1');
  if (parts.length === 1 && isAll(parts[0])) return [-1, -1];
  if (parts.length !== 2) return null;
  const v = parts.map((p) => (isAll(p) ? -1 : /^\d+$/.test(p) && +p > 0 ? +p : NaN));
  return v.some(Number.isNaN) ? null : [v[0], v[1]];
}

export const fmtPair = (p: readonly number[]): string => (p[0] === -1 && p[1] === -1 ? 'all' : p.map((x) => (x === -1 ? 'all' : x)).join('x'));

/** "2:4" -> [2, 4], or null: the package's parseNm (1 <= n <= m), so the page accepts what the CLI and the module accept. */
export function parseNM(s: string): [number, number] | null {
  try { return parseNm(s); } catch { return null; }
}
