// Latency as onnxruntime on this machine sees it: a candidate and the unpruned model are run in turns
// on the same sample (interleaved, so a load change on a shared machine hits both alike), after a
// warm-up run each; the saving is the median of the paired differences.
import type { InputSample } from '../calib/inputs.js';
import type { ModelRunner, RunnerSession } from '../calib/ort-runner.js';
import type { RunCounter } from './model-runs.js';

const median = (xs: number[]) => { const s = xs.slice().sort((a, b) => a - b); const n = s.length; return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : 0; };

export class LatencyProbe {
  private constructor(private runner: ModelRunner, private base: RunnerSession, private sample: InputSample, private count: RunCounter, private runs: number) {}

  static async open(runner: ModelRunner, bytes: Uint8Array, sample: InputSample, count: RunCounter, runs = 5): Promise<LatencyProbe> {
    const t = performance.now();
    const base = await runner.createSession(bytes);
    count.sessions++;
    await base.run(sample.feeds); // warm-up
    count.runs++;
    count.ms += performance.now() - t; // onnxruntime's time, as every session and run of the search
    return new LatencyProbe(runner, base, sample, count, Math.max(1, runs));
  }

  /** Median ms per run of the unpruned model and of `bytes`, and their paired difference (positive: faster). */
  async compare(bytes: Uint8Array): Promise<{ baseMs: number; candidateMs: number; savedMs: number }> {
    const t0 = performance.now();
    const cand = await this.runner.createSession(bytes);
    this.count.sessions++;
    try {
      await cand.run(this.sample.feeds);
      this.count.runs++;
      this.count.ms += performance.now() - t0;
      const d: number[] = [], a: number[] = [], b: number[] = [];
      for (let i = 0; i < this.runs; i++) {
        let t = performance.now(); await this.base.run(this.sample.feeds); const tb = performance.now() - t;
        t = performance.now(); await cand.run(this.sample.feeds); const tc = performance.now() - t;
        this.count.runs += 2; this.count.ms += tb + tc;
        a.push(tb); b.push(tc); d.push(tb - tc);
      }
      return { baseMs: median(a), candidateMs: median(b), savedMs: median(d) };
    } finally { await cand.release(); }
  }

  async saved(bytes: Uint8Array): Promise<number> { return (await this.compare(bytes)).savedMs; }

  release(): Promise<void> { return this.base.release(); }
}
