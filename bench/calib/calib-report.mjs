// Calibration section of bench/RESULTS.md: merges bench/out/calib-{node,chromium,numpy}.jsonl,
// prints the table and replaces the section between the calib markers of RESULTS.md (appending
// it when absent), so that it survives bench/kernels/report.mjs rewriting the rest.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

const out = new URL('../out/', import.meta.url);
const read = (f) => existsSync(new URL(f, out))
  ? readFileSync(new URL(f, out), 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  : [];
const all = [...read('calib-node.jsonl'), ...read('calib-chromium.jsonl'), ...read('calib-numpy.jsonl')];
const recs = all.filter((r) => r.kind === 'calib');
const checks = all.filter((r) => r.kind === 'calib-check');
const get = (env, variant, op, rows, cols) => recs.find((r) => r.env === env && r.variant === variant && r.op === op && r.rows === rows && r.cols === cols);
const f = (x, d = 2) => (x == null || !isFinite(x) ? '–' : x.toFixed(d));

const shapes = [...new Set(recs.map((r) => `${r.rows}x${r.cols}`))].map((s) => s.split('x').map(Number));
const columns = [
  ['node simd', 'node', 'simd'], ['node scalar', 'node', 'scalar'], ['chromium simd', 'chromium', 'simd'],
  ['chromium mt', 'chromium', 'mt'], ['numpy 1 thread', 'numpy', 'openblas-1t'],
];
const lines = [];
lines.push('| op | shape (rows×cols) | ' + columns.map((c) => c[0]).join(' | ') + ' | simd/numpy time | mt/st (chromium) |');
lines.push('|---|---|' + columns.map(() => '---:').join('|') + '|---:|---:|');
for (const op of ['hessian', 'sparsegpt']) {
  for (const [rows, cols] of shapes) {
    const cell = (env, variant) => {
      const r = get(env, variant, op, rows, cols);
      if (!r) return '–';
      return op === 'hessian' ? `${f(r.gflops)} GFLOP/s (${f(r.seconds * 1e3, 0)} ms)` : `${f(r.seconds, 3)} s`;
    };
    const simd = get('node', 'simd', op, rows, cols);
    const np = get('numpy', 'openblas-1t', op, rows, cols);
    const cst = get('chromium', 'simd', op, rows, cols);
    const cmt = get('chromium', 'mt', op, rows, cols);
    lines.push(`| ${op} | ${rows}×${cols} | ${columns.map((c) => cell(c[1], c[2])).join(' | ')} | ${f(simd && np ? simd.seconds / np.seconds : NaN)} | ${f(cst && cmt ? cst.seconds / cmt.seconds : NaN)} |`);
  }
}
const nvec = recs[0]?.nvec ?? '–';
const hs = get('node', 'simd', 'hessian', 3072, 768);
const sg = get('node', 'simd', 'sparsegpt', 3072, 768);
const sgNp = get('numpy', 'openblas-1t', 'sparsegpt', 3072, 768);
const targets = [
  ['Hessian accumulation, 1 thread SIMD, Node (GFLOP/s, cols 768)', hs?.gflops, '≥ 8', hs ? hs.gflops >= 8 : null],
  ['sparseGpt 3072×768, Node SIMD time / numpy 1-thread time', sg && sgNp ? sg.seconds / sgNp.seconds : null, '≤ 3', sg && sgNp ? sg.seconds / sgNp.seconds <= 3 : null],
  ...shapes.map(([r, c]) => {
    const st = get('chromium', 'simd', 'sparsegpt', r, c);
    const mt = get('chromium', 'mt', 'sparsegpt', r, c);
    const x = st && mt ? st.seconds / mt.seconds : null;
    return [`sparseGpt ${r}×${c}, threaded vs single-threaded, Chromium`, x, '≥ 1.6', x == null ? null : x >= 1.6];
  }),
];
const section = `<!-- calib:begin -->
## Calibration kernels (Hessian, SparseGPT)

Written by \`node bench/calib/calib-report.mjs\` from \`bench/out/calib-*.jsonl\` (scripts/bench.sh runs
\`bench/calib/calib-node.mjs\`, \`bench/kernels/chromium.mjs --calib\` and \`bench/calib/calib_ref.py\`). ${nvec} calibration
vectors; SparseGPT at sparsity 0.5, block 128, percDamp 0.01 (its time includes damping, the
Cholesky factors of H⁻¹ in f64, the column loop and the lazy updates). Hessian GFLOP/s counts the
useful flops of the symmetric update, nvec·cols·(cols+1) (the upper triangle; a full GEMM would be
twice that); the Hessian of a 3072×768 weight has cols = 768, of 768×3072 cols = 3072. Best of the
interleaved repetitions. numpy: OpenBLAS with OPENBLAS_NUM_THREADS=1, same algorithm (bench/calib/calib_ref.py).
Bit-identity across variants (digest of H and of the pruned weights): ${checks.length ? checks.map((c) => `${c.env} ${c.rows}×${c.cols} [${c.variants.join(', ')}]: ${c.identical ? 'identical' : '**differ**'}`).join('; ') : 'not run'}.

| target | figure | goal | met |
|---|---:|---|---|
${targets.map((t) => `| ${t[0]} | ${f(t[1])} | ${t[2]} | ${t[3] == null ? 'not measured' : t[3] ? 'yes' : '**no**'} |`).join('\n')}

${lines.join('\n')}

Where the time goes: U (one Cholesky and one triangular inverse, f64, O(cols³)) is blocked and split
over the workers (bench/README.md, "Calibration kernels"), as are the column loop, the selection of
large blocks, each block's copies and the lazy updates; what stays sequential is small (the f64 copy
of H, the finiteness check, each 64×64 diagonal block of the factorization, the boundary bucket of a
selection). The 3072×768 run is short (≈ 0.15 s, about 150 parallel regions), so its threaded ratio
is the most sensitive to other jobs on the 2 cores (1.27–1.45 over 4 runs, 768×3072: 1.85–2.21). At cols = 3072
the Hessian's f32 Gram of each 64-vector chunk (37 MB) streams through memory once per chunk, which
bounds both the single-threaded rate and the threaded gain. Figures of 2026-11-23: load average 1.3–6
from other jobs during the runs; Chromium best of 4 runs (interleaved within each), Node 1 run.
<!-- calib:end -->
`;
console.log(section);
const resPath = new URL('../RESULTS.md', out);
let md = existsSync(resPath) ? readFileSync(resPath, 'utf8') : '# Benchmark results\n';
const re = /<!-- calib:begin -->[\s\S]*<!-- calib:end -->\n?/;
md = re.test(md) ? md.replace(re, section) : `${md.trimEnd()}\n\n${section}`;
writeFileSync(resPath, md);
