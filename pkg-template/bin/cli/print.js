// What the CLI shows: progress on stderr (a redrawn line on a terminal, plain lines otherwise),
// tables and figures on stdout, the report as JSON (written atomically).
import fs from 'node:fs';

/** @typedef {import('sparsekit-wasm/onnx').JobProgress} JobProgress */
/** @typedef {import('sparsekit-wasm/onnx').OutputFidelity} OutputFidelity */
/** @typedef {import('sparsekit-wasm/onnx').FidelityReport} FidelityReport */

/** @param {readonly (number | string)[]} d */
export const fmtShape = (d) => `[${d.join(',')}]`;
/** @param {number} x */
export const fmtPct = (x) => `${(100 * x).toFixed(1)}%`;
/** @param {number} b */
export function fmtBytes(b) {
  if (b < 1024) return `${b} B`;
  if (b < 1024 ** 2) return `${(b / 1024).toFixed(1)} KiB`;
  if (b < 1024 ** 3) return `${(b / 1024 ** 2).toFixed(2)} MiB`;
  return `${(b / 1024 ** 3).toFixed(2)} GiB`;
}
/**
 * A quantization report's layers counted by form, "12 x int4-nbits, 3 x float" (the CLI's prune and
 * recover print the same line part). @param {readonly { form: string }[]} layers
 */
export function formCounts(layers) {
  /** @type {Map<string, number>} */
  const n = new Map();
  for (const l of layers) n.set(l.form, (n.get(l.form) ?? 0) + 1);
  return [...n].map(([form, k]) => `${k} x ${form}`).join(', ');
}
/** Seconds as 1h02m / 3m07s ('?' when unknown). @param {number | undefined} s */
export const clock = (s) => (s === undefined ? '?' : s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`);

/** @param {unknown[][]} rows @param {string[]} header */
export function table(rows, header) {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => String(r[i]).length)));
  return all.map((r) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')).join('\n');
}

/**
 * Progress of a job on stderr. Counted phases (prune, capture, sensitivity…): on a terminal one
 * redrawn line, otherwise a line per phase change and per 5%. Training phases (with an epoch): a
 * line at most every 2 s with the epoch, loss, fidelity, ETA and elapsed time.
 * @param {boolean | undefined} quiet
 * @param {(p: JobProgress) => string} [extra]
 * @returns {(p: JobProgress) => void}
 */
export function progress(quiet, extra = () => '') {
  const tty = process.stderr.isTTY;
  const t0 = Date.now();
  let lastPct = -1, lastStage = '', lastLine = 0, open = false;
  return (p) => {
    if (quiet) return;
    if (p.epoch !== undefined || p.loss !== undefined) {
      const t = Date.now();
      if (p.done !== p.total && t - lastLine < 2000) return;
      lastLine = t;
      if (open) { process.stderr.write('\n'); open = false; }
      const ep = p.epoch ? ` epoch ${p.epoch}${p.epochs !== undefined && Number.isFinite(p.epochs) ? `/${p.epochs}` : ''}` : '';
      const loss = p.loss !== undefined ? ` loss ${p.loss.toPrecision(4)}` : '';
      const fid = p.fidelity !== undefined ? ` fidelity ${p.fidelity.toFixed(4)}` : '';
      const eta = p.eta !== undefined ? ` ETA ${clock(p.eta)}` : '';
      process.stderr.write(`${p.phase}${ep} ${p.done}/${p.total}${extra(p)}${loss}${fid}${eta} [${clock((t - t0) / 1000)}]\n`);
      return;
    }
    const pct = p.total ? Math.floor((100 * p.done) / p.total) : 100;
    if (tty) {
      const cols = (process.stderr.columns || 100) - 1;
      process.stderr.write(`\r${`${p.phase} ${p.done}/${p.total} ${p.label ?? ''}`.slice(0, cols).padEnd(cols)}`);
      open = p.done < p.total;
      if (!open) process.stderr.write('\n');
    } else if (p.phase !== lastStage || pct >= lastPct + 5 || p.done >= p.total) {
      process.stderr.write(`${p.phase}: ${p.done}/${p.total}${p.label ? ` ${p.label}` : ''}\n`);
      lastPct = pct; lastStage = p.phase;
    }
  };
}

/** Writes JSON through a temporary file and a rename. @param {string} file @param {unknown} value */
export function writeJson(file, value) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  fs.renameSync(tmp, file);
}

/** The headline of one output's metrics. @param {OutputFidelity} o */
function headline(o) {
  const m = o.metrics, p = (/** @type {number} */ x) => `${(100 * x).toFixed(1)}%`;
  switch (o.kind) {
    case 'classification': return `top-1 ${p(m.top1Agreement)}, top-5 ${p(m.top5Agreement)}, KL ${m.meanKL.toFixed(4)}`;
    case 'detection': return m.f1 === undefined ? (o.detail ?? '') : `box F1 ${m.f1.toFixed(3)} (${m.matched}/${m.referenceBoxes} kept, ${m.prunedBoxes} found), score cosine ${m.scoreCosine.toFixed(3)}`;
    case 'dense-map': return `region F1 ${m.componentF1.toFixed(3)} (${m.matched}/${m.referenceComponents}), pixel IoU ${m.iou.toFixed(3)}`;
    case 'sequence': return `CER vs original ${p(m.cerVsOriginal)}, steps ${p(m.stepAgreement)}, exact ${p(m.exactMatch)}`;
    default: return m.cosine === undefined ? (o.detail ?? '') : `cosine ${m.cosine.toFixed(4)}${m.worstChannel === undefined ? '' : `, worst channel #${m.worstChannel} off ${p(m.worstChannelRelError)}`}`;
  }
}

/** The fidelity table: output, kind, score, headline metrics, the decisions a score is a share of. @param {FidelityReport} report */
export function fidelityTable(report) {
  return table(report.outputs.map((o) => [o.name, o.kind, o.score.toFixed(4), headline(o), o.decisions ?? '-']), ['output', 'kind', 'score', 'measured', 'decisions']);
}

/**
 * Ctrl-C during a long run: aborts the returned signal (the run stops at its next step and writes
 * nothing); `release()` removes the handler.
 * @param {boolean | undefined} quiet
 */
export function interruptible(quiet) {
  const ac = new AbortController();
  const onSigint = () => { ac.abort(); if (!quiet) process.stderr.write('\ninterrupted: stopping, nothing will be written\n'); };
  process.on('SIGINT', onSigint);
  return { signal: ac.signal, release: () => process.off('SIGINT', onSigint) };
}
