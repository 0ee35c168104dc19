// Merges the bench records (bench/out/{native,node,chromium}.jsonl), prints one table per
// operation and size, checks the targets, and writes bench/out/latest.json and bench/RESULTS.md.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { execSync } from 'node:child_process';

const out = new URL('../out/', import.meta.url);
const read = (f) => existsSync(new URL(f, out))
  ? readFileSync(new URL(f, out), 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  : [];
const all = [...read('native.jsonl'), ...read('node.jsonl'), ...read('chromium.jsonl')];
const ops = all.filter((r) => r.kind === 'op');
const membw = Object.fromEntries(all.filter((r) => r.kind === 'membw').map((r) => [r.env, r.gbps]));
const checks = all.filter((r) => r.kind === 'check');
const mtInfo = all.find((r) => r.kind === 'info' && r.env === 'chromium' && r.variant === 'mt');

const key = (env, variant, op, rows, cols, block) => [env, variant, op, rows, cols, block].join('|');
const byKey = new Map(ops.map((r) => [key(r.env, r.variant, r.op, r.rows, r.cols, r.block), r]));
const get = (env, variant, r) => byKey.get(key(env, variant, r.op, r.rows, r.cols, r.block));

// Every record: GB/s of weights processed and its ratios.
for (const r of ops) {
  const bytes = r.rows * r.cols * 4;
  r.gbps = bytes / r.seconds / 1e9;
  const ratio = (other) => (other ? other.seconds / r.seconds : null);
  r.ratios = {};
  if (r.env !== 'native') {
    r.ratios.of_membw_wasm = membw[r.env] ? r.gbps / membw[r.env] : null;
    r.ratios.of_membw_native = membw.native ? r.gbps / membw.native : null;
    r.ratios.vs_js = r.variant !== 'js' ? ratio(get(r.env, 'js', r)) : null;
    r.ratios.vs_scalar_wasm = ['simd', 'mt'].includes(r.variant) ? ratio(get(r.env, 'scalar', r) || get('node', 'scalar', r)) : null;
    r.ratios.vs_native_st = ratio(get('native', 'native-st', r));
    r.ratios.threaded_vs_st = r.variant === 'mt' ? ratio(get(r.env, 'simd', r)) : null;
  } else {
    r.ratios.of_membw_native = membw.native ? r.gbps / membw.native : null;
    r.ratios.threaded_vs_st = r.variant === 'native-mt' ? ratio(get('native', 'native-st', r)) : null;
  }
}

const f = (x, d = 2) => (x == null || !isFinite(x) ? '–' : x.toFixed(d));
const cols = [
  ['node simd GB/s', (r) => f(get('node', 'simd', r)?.gbps)],
  ['%membw (wasm)', (r) => f(100 * (get('node', 'simd', r)?.ratios.of_membw_wasm ?? NaN), 0)],
  ['×JS', (r) => f(get('node', 'simd', r)?.ratios.vs_js, 1)],
  ['×scalar wasm', (r) => f(get('node', 'simd', r)?.ratios.vs_scalar_wasm)],
  ['÷native-st', (r) => f(get('node', 'simd', r)?.ratios.vs_native_st)],
  ['chromium simd GB/s', (r) => f(get('chromium', 'simd', r)?.gbps)],
  ['chromium mt GB/s', (r) => f(get('chromium', 'mt', r)?.gbps)],
  ['mt/st (chromium)', (r) => f(get('chromium', 'mt', r)?.ratios.threaded_vs_st)],
  ['×JS (chromium)', (r) => f(get('chromium', 'simd', r)?.ratios.vs_js, 1)],
  ['native-st GB/s', (r) => f(get('native', 'native-st', r)?.gbps)],
  ['native mt/st', (r) => f(get('native', 'native-mt', r)?.ratios.threaded_vs_st)],
  ['node simd ms', (r) => f(1e3 * (get('node', 'simd', r)?.seconds ?? NaN), 1)],
];
const lines = [];
const seen = new Set();
for (const r of ops) {
  const k = `${r.op}|${r.rows}x${r.cols}`;
  if (seen.has(k)) continue;
  seen.add(k);
  lines.push(`\n#### ${r.op} — ${r.rows}×${r.cols} f32 (${f(r.rows * r.cols * 4 / 2 ** 20, 0)} MiB)\n`);
  lines.push(`| block | ${cols.map((c) => c[0]).join(' | ')} |`);
  lines.push(`|---|${cols.map(() => '---:').join('|')}|`);
  const blocks = [...new Set(ops.filter((x) => x.op === r.op && x.rows === r.rows && x.cols === r.cols).map((x) => x.block))];
  for (const b of blocks) {
    const probe = { op: r.op, rows: r.rows, cols: r.cols, block: b };
    lines.push(`| ${b} | ${cols.map((c) => c[1](probe)).join(' | ')} |`);
  }
}

// Targets.
const P = (op, block, rows = 4096, cols = 4096) => ({ op, rows, cols, block });
const n44 = P('norms', '4x4');
const s44 = P('soft', '4x4');
const nodeNorm = get('node', 'simd', n44);
const targets = [];
const tgt = (name, value, goal, ok, note = '') => targets.push({ name, value, goal, met: ok == null ? null : !!ok, note });
tgt('L2 norms 4096² 4×4, 1 thread SIMD: share of same-run wasm memory-read bandwidth (Node)', nodeNorm?.ratios.of_membw_wasm, '≥ 0.60', nodeNorm && nodeNorm.ratios.of_membw_wasm >= 0.6);
tgt('… vs plain JS (Node)', nodeNorm?.ratios.vs_js, '≥ 5×', nodeNorm && nodeNorm.ratios.vs_js >= 5);
tgt('… vs native Rust single-threaded', nodeNorm?.ratios.vs_native_st, '≥ 0.8×', nodeNorm && nodeNorm.ratios.vs_native_st >= 0.8);
for (const [name, p] of [['L2 norms 4096² 4×4', n44], ['Adam soft threshold 4096² 4×4', s44]]) {
  const mt = get('chromium', 'mt', p);
  tgt(`${name}: threaded (2 cores) vs single-threaded, Chromium`, mt?.ratios.threaded_vs_st, '≥ 1.7×', mt && mt.ratios.threaded_vs_st >= 1.7);
  const nmt = get('native', 'native-mt', p);
  tgt(`${name}: threaded vs single-threaded, native (reference)`, nmt?.ratios.threaded_vs_st, '≥ 1.7×', nmt && nmt.ratios.threaded_vs_st >= 1.7);
}
const nm = get('node', 'simd', P('nm24', '-', 4096, 11008));
tgt('2:4 mask 4096×11008, 1 thread, Node (ms)', nm && nm.seconds * 1e3, '< 60 ms', nm && nm.seconds < 0.06);
// The Adam step in norm passes, default method (Newton) and, for reference, the seed's bisection
// (20 iterations, atol 0), each over the same run's norm pass.
const sb44 = P('soft-bisection', '4x4');
for (const env of ['node', 'chromium']) {
  const Env = env === 'node' ? 'Node' : 'Chromium';
  const norm = get(env, 'simd', n44);
  const per = (p) => { const s = get(env, 'simd', p); return s && norm ? s.seconds / norm.seconds : null; };
  const v = per(s44);
  tgt(`Adam soft threshold (default method) / one norm pass, 4096² 4×4, ${Env}`, v, '≤ 8×', v == null ? null : v <= 8);
  const vb = per(sb44);
  tgt(`… method 'bisection' (20 iterations) / one norm pass, ${Env} (reference)`, vb, '–', null);
}
// The threads probe (bench/threads/threads-suite.mjs, out/threads.jsonl) and the repeated 2:4 mask
// (bench/kernels/nm-node.mjs, out/nm.jsonl): medians, with the same-moment ceiling and the load.
const probeRecs = read('threads.jsonl');
const load3 = (r) => (r.load || []).map((x) => f(x)).join(' ') || (r.load_after ?? '?');
for (const [name, op] of [['L2 norms', 'norms'], ['Adam soft threshold', 'soft']]) {
  const r = probeRecs.find((x) => x.kind === 'threads-op' && x.op === op);
  tgt(`${name} 4096² 4×4: threaded (${r?.nthreads ?? 2} workers) vs single-threaded, Chromium, threads probe: median of ${r?.st.reps ?? '–'} interleaved (best ${f(r?.ratio_best)}; 2-worker ceilings at those moments: integer chain ${f(r?.ceiling_median)}, SIMD multiply-adds ${f(r?.ceiling_fp_median)}; load ${r ? load3(r) : '–'})`,
    r?.ratio_median, '≥ 1.7×', r && r.ratio_median >= 1.7);
}
const nmRec = read('nm.jsonl').find((x) => x.kind === 'nm24');
tgt(`2:4 mask 4096×11008, 1 thread, Node: median of ${nmRec?.reps ?? '–'} (p90 ${f(nmRec?.p90_ms, 1)}, best ${f(nmRec?.best_ms, 1)} ms; load ${nmRec ? load3(nmRec) : '–'})`,
  nmRec?.median_ms, '< 60 ms', nmRec && nmRec.median_ms < 60);
// The same mask as users call it (bench/kernels/nm-package.mjs): a JS Float32Array through pkg/.
for (const r of read('nm-package.jsonl').filter((x) => x.kind === 'nm24-package')) {
  tgt(`… through the package, a JS Float32Array, ${r.variant === 'out' ? 'into a reused `out` array' : 'a new mask array per call'} (reference): median of ${r.reps} (best ${f(r.best_ms, 1)} ms; wasm memory ${f(r.wasm_memory_before_mb, 1)} → ${f(r.wasm_memory_after_mb, 1)} MB)`,
    r.median_ms, '–', null);
}

let machine = 'unknown';
try {
  const l = execSync('lscpu', { encoding: 'utf8' });
  const m = (k) => (l.match(new RegExp(`^${k}:\\s*(.*)$`, 'm')) || [])[1];
  machine = `${m('Model name')}, ${m('CPU\\(s\\)')} CPUs (${m('Core\\(s\\) per socket')} cores/socket, ${m('Thread\\(s\\) per core')} threads/core), ${(Number(execSync("awk '/MemTotal/{print $2}' /proc/meminfo", { encoding: 'utf8' })) / 2 ** 20).toFixed(0)} GiB RAM`;
} catch {}
let load = '';
try { load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '); } catch {}
const date = new Date().toISOString();

const tl = ['| target | figure | goal | met |', '|---|---:|---|---|',
  ...targets.map((t) => `| ${t.name} | ${f(t.value)} | ${t.goal} | ${t.goal === '–' ? '–' : t.met == null ? 'not measured' : t.met ? 'yes' : '**no**'} |`)];
const head = [
  `Machine: ${machine}. Date: ${date}. Load average at the end of the run: ${load}.`,
  `Memory-read bandwidth (16-accumulator sum over 256 MiB, best of 7): native ${f(membw.native)} GB/s, wasm in Node ${f(membw.node)} GB/s, wasm in Chromium ${f(membw.chromium)} GB/s.`,
  `Threads-vs-sequential bit-identity checks (native): ${checks.length ? `${checks.filter((c) => c.identical).length}/${checks.length} identical` : 'not run'}.`,
  `Chromium threaded variant: ${mtInfo ? `${mtInfo.nthreads} rayon workers (reported by the module after the pool started), crossOriginIsolated ${mtInfo.crossOriginIsolated}` : 'not run'}.`,
  `Threads probe (Chromium): ${(() => {
    const bw = probeRecs.find((x) => x.kind === 'threads-bw');
    const pool = probeRecs.find((x) => x.kind === 'threads-pool');
    return bw ? `memory-read bandwidth 1 thread ${f(bw.st_gbps)} GB/s, all ${bw.nthreads} workers at once ${f(bw.mt_all_workers_gbps)} GB/s; an empty parallel region ${f(pool?.region_us_median, 0)} µs` : 'not run';
  })()}.`,
];
// Where the threaded calls' time goes (bench/threads/task-trace.mjs: the traced build, same page).
const traceRecs = probeRecs.filter((x) => x.kind === 'threads-trace');
const parts = ['call', 'start', 'late', 'work', 'imbalance', 'end', 'stall'];
const trace = traceRecs.length ? [
  '', '### Where a threaded call\'s time goes (Chromium, traced build)', '',
  `Each task of the core's parallel loops timed with its worker (\`bench/threads/task-trace.mjs\`, build \`mttrace\`), interleaved with the single-threaded call; ms, median / p90 over the calls. \`work\` = the tasks' summed time / workers; \`late\` = the last worker's first task after the first worker's; \`stall\` = task time beyond 1.5× the median task; "task ÷ single" = median task / (single-threaded call / tasks per call).`,
  '',
  `| cell | calls | single | ${parts.join(' | ')} | tasks | task ÷ single |`,
  `|---|---:|---:|${parts.map(() => '---:').join('|')}|---:|---:|`,
  ...traceRecs.map((r) => `| ${r.op} ${r.rows}² ${r.block.replace('x', '×')} | ${r.reps} | ${f(r.single_median_ms)} | ${parts.map((k) => `${f(r[k].median)} / ${f(r[k].p90)}`).join(' | ')} | ${r.tasks.median} | ${f(r.task_vs_single)} |`),
] : [];
console.log(['# sparsekit-wasm bench', ...head, '', '## Targets', ...tl, ...trace, '', '## Tables', ...lines].join('\n'));

writeFileSync(new URL('latest.json', out), JSON.stringify({ machine, date, membw, targets, checks, records: ops }, null, 1));
const md = `<!-- kernels:begin -->
## The kernel suite (\`npm run bench\`)

Written by \`npm run bench\` (\`bash scripts/bench.sh\`: \`bench/kernels/report.mjs\` writes this section); every figure is also in bench/out/latest.json.
${head.join('\n')}

Columns: GB/s = weight bytes (rows × cols × 4) / best time of the repetitions (noise on a shared
machine only adds time; every median is in latest.json as \`median_seconds\`). "%membw (wasm)" is that rate as a share of
the memory-read bandwidth measured by the same wasm build in the same run. "×JS" = plain-JS time / our
time (same engine). "×scalar wasm" = scalar-kernel wasm time / SIMD128 wasm time. "÷native-st" =
native Rust single-thread time / wasm time (1.0 = as fast as native). "mt/st" = single-threaded time /
threaded time (2 workers on this 2-core machine). Ops: \`norms\` = block L2 norms; \`hard\` = hardThreshold
by sparsity 0.5 in 1×N scopes (one block-grid row each); \`soft\` = Adam-conditioned softThreshold with
the default method (Newton; maxIter 20, atol 0), \`soft-bisection\` = the same with method 'bisection' (20
iterations); \`nm24\` = 2:4 keep-mask. Block \`T4x4\` = 4×4 blocks of the transposed view.

### Targets

${tl.join('\n')}
${trace.join('\n')}

### Tables
${lines.join('\n')}
<!-- kernels:end -->
`;
// This section lies between <!-- kernels:begin --> and <!-- kernels:end -->; the rest of the file
// (the other subjects, their own writers' sections) is kept as it is.
const resPath = new URL('../RESULTS.md', out);
const prev = existsSync(resPath) ? readFileSync(resPath, 'utf8') : '# Benchmark results\n';
const at = prev.indexOf('<!-- kernels:begin -->'), end = prev.indexOf('<!-- kernels:end -->');
writeFileSync(resPath, at >= 0 && end > at
  ? `${prev.slice(0, at)}${md.trimEnd()}${prev.slice(end + '<!-- kernels:end -->'.length)}`
  : `${prev.trimEnd()}\n\n${md}`);
