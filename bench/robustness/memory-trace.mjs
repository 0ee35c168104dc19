// Where a Node process's memory goes over a run, loaded before the program with
// `node --import ./bench/robustness/memory-trace.mjs PROGRAM ...` and MEMTRACE_OUT=file.jsonl: every
// 250 ms it samples process.memoryUsage() (rss; the JS heap; `external`; `arrayBuffers`), the size
// of every WebAssembly memory the program made (`wasm`: the sparsekit-wasm build's, whose training
// core holds its state there; a wasm memory never shrinks), and from /proc/self/status the split of
// RSS into anonymous and file-backed pages (`rssFile`: mapped files, such as onnxruntime's mapping of
// external data). Every second it also reads /proc/self/smaps for the resident part of the wasm
// memories (`wasmRss`: V8 reserves 8 GiB and more of address space for a wasm32 memory and makes
// its first pages accessible as the memory grows, a read-write mapping right below the rest of the
// reservation; nothing else maps that much). Each line the program writes to stderr (the CLI's progress)
// is kept as a mark with its time, so the samples split into phases; on exit it writes the samples,
// the marks and a summary line: the peak of each quantity, the parts at the moment of the RSS peak,
// and per phase (the text of a mark up to its first digit or colon) the peak of each. Only the main
// thread records (the package's rayon workers load this module too). Nothing is printed to the
// program's own output.
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const out = process.env.MEMTRACE_OUT;
if (out && isMainThread) {
  const t0 = Date.now();
  const samples = [];
  const marks = [];
  // The wasm memories: made by `new WebAssembly.Memory` (the threaded build imports its shared
  // memory) or exported by an instance (the single-threaded build's own).
  const memories = new Set();
  const seen = new WeakSet(); // the threaded build's memory is both made and exported: counted once
  const keep = (m) => { if (m instanceof WebAssembly.Memory && !seen.has(m)) { seen.add(m); memories.add(new WeakRef(m)); } };
  WebAssembly.Memory = new Proxy(WebAssembly.Memory, { construct(T, args, nt) { const m = Reflect.construct(T, args, nt); keep(m); return m; } });
  const exported = (inst) => { for (const v of Object.values(inst?.exports ?? {})) keep(v); return inst; };
  WebAssembly.Instance = new Proxy(WebAssembly.Instance, { construct(T, args, nt) { return exported(Reflect.construct(T, args, nt)); } });
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async (...args) => { const r = await instantiate(...args); exported(r.instance ?? r); return r; };
  const wasmBytes = () => { let n = 0; for (const r of memories) { const m = r.deref(); if (m) n += m.buffer.byteLength; else memories.delete(r); } return n; };
  const status = () => {
    const s = {};
    try {
      for (const line of fs.readFileSync('/proc/self/status', 'utf8').split('\n')) {
        const m = /^(RssAnon|RssFile|RssShmem):\s+(\d+) kB/.exec(line);
        if (m) s[m[1]] = Number(m[2]) * 1024;
      }
    } catch { /* not Linux */ }
    return s;
  };
  // Resident bytes of the read-write mappings that end where a reservation of 4 GiB or more without
  // access starts: the grown part of each wasm memory.
  const wasmRss = () => {
    let text;
    try { text = fs.readFileSync('/proc/self/smaps', 'utf8'); } catch { return undefined; }
    let prev = null, cur = null, n = 0;
    for (const line of text.split('\n')) {
      const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) /.exec(line);
      if (head) {
        prev = cur;
        cur = { from: parseInt(head[1], 16), to: parseInt(head[2], 16), perm: head[3], rss: 0 };
        if (prev && prev.perm === 'rw-p' && cur.perm === '---p' && prev.to === cur.from && cur.to - cur.from >= 4 * 2 ** 30) n += prev.rss;
        continue;
      }
      if (cur && line.startsWith('Rss:')) cur.rss = Number(/(\d+)/.exec(line)[1]) * 1024;
    }
    return n;
  };
  let tick = 0;
  const sample = () => {
    const m = process.memoryUsage();
    const st = status();
    const s = { t: (Date.now() - t0) / 1000, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers,
      wasm: wasmBytes(), rssAnon: st.RssAnon, rssFile: st.RssFile, rssShmem: st.RssShmem };
    if (tick++ % 4 === 0) s.wasmRss = wasmRss();
    samples.push(s);
  };
  setInterval(sample, 250).unref();
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk, ...rest) => {
    for (const line of String(chunk).split(/[\r\n]/)) if (line.trim()) marks.push({ t: (Date.now() - t0) / 1000, mark: line.trim().slice(0, 120) });
    return write(chunk, ...rest);
  };
  process.on('exit', () => {
    sample();
    const keys = ['rss', 'heapUsed', 'external', 'arrayBuffers', 'wasm', 'wasmRss', 'rssAnon', 'rssFile'];
    const peaks = (ss) => Object.fromEntries(keys.map((k) => [k, Math.max(0, ...ss.map((s) => s[k] ?? 0))]));
    const atPeak = samples.reduce((a, s) => (s.rss > a.rss ? s : a), samples[0]);
    // Phases: runs of marks whose text up to the first digit or colon is the same.
    const phases = [];
    for (const m of marks) {
      const name = m.mark.split(/[\d:]/)[0].trim() || m.mark;
      if (phases.at(-1)?.name !== name) phases.push({ name, from: m.t });
    }
    const byPhase = phases.map((p, i) => {
      const to = phases[i + 1]?.from ?? Infinity;
      const ss = samples.filter((s) => s.t >= p.from && s.t < to);
      return { phase: p.name, from: p.from, to: Number.isFinite(to) ? to : samples.at(-1).t, ...(ss.length ? peaks(ss) : {}) };
    });
    const summary = { summary: true, seconds: (Date.now() - t0) / 1000, maxRSS: process.resourceUsage().maxRSS * 1024, peak: peaks(samples),
      // `native`: what is neither the JS heap, nor array buffers, nor wasm memory (onnxruntime, Node itself)
      atPeak: { ...atPeak, native: atPeak.rss - atPeak.heapTotal - atPeak.external - atPeak.wasm }, byPhase };
    fs.writeFileSync(out, [...samples, ...marks].map((s) => JSON.stringify(s)).join('\n') + '\n' + JSON.stringify(summary) + '\n');
  });
}
