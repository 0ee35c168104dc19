// Where a Node process's memory goes over a run, loaded before the program with
// `node --import ./bench/robustness/memory-trace.mjs PROGRAM ...` and MEMTRACE_OUT=file.jsonl: every
// 250 ms it samples process.memoryUsage() (rss; the JS heap; `external`, which counts array buffers
// and wasm memories; `arrayBuffers`) and, on exit, writes the samples and a summary line: the peak of
// each, and the parts at the moment of the RSS peak. What RSS holds beyond the heap and `external`
// is native memory (onnxruntime's sessions and arenas, the code). Nothing is printed to the program's
// own output.
import fs from 'node:fs';

const out = process.env.MEMTRACE_OUT;
if (out) {
  const t0 = Date.now();
  const samples = [];
  const sample = () => {
    const m = process.memoryUsage();
    samples.push({ t: (Date.now() - t0) / 1000, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers });
  };
  setInterval(sample, 250).unref();
  process.on('exit', () => {
    sample();
    const peak = (k) => Math.max(...samples.map((s) => s[k]));
    const atPeak = samples.reduce((a, s) => (s.rss > a.rss ? s : a), samples[0]);
    const summary = { summary: true, seconds: (Date.now() - t0) / 1000, maxRSS: process.resourceUsage().maxRSS * 1024,
      peak: { rss: peak('rss'), heapUsed: peak('heapUsed'), external: peak('external'), arrayBuffers: peak('arrayBuffers') },
      atPeak: { ...atPeak, native: atPeak.rss - atPeak.heapTotal - atPeak.external } };
    fs.writeFileSync(out, samples.map((s) => JSON.stringify(s)).join('\n') + '\n' + JSON.stringify(summary) + '\n');
  });
}
