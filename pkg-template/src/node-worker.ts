// The Web Worker surface wasm-bindgen-rayon's no-bundler helper expects, given to it in Node for
// the time the threaded build starts its pool (node.ts). The helper is written for browsers: it
// fetches its own `import.meta.url` (a file: URL here, which Node's fetch refuses), wraps it in a
// blob: URL, starts `new Worker(url, { type: 'module' })` and talks to it with `postMessage` and
// 'message' events; and importing the glue at all evaluates its top level, which listens on
// `self`. Node 20 has worker_threads but no `Worker`, no `self`, and its ESM loader cannot import
// blob: URLs. The idea of a Worker class over worker_threads whose thread sets up the worker
// scope before running the script comes from the `web-worker` npm package (developit/web-worker,
// node/index.js); this is a smaller one for this single use, not a dependency.
import { readFileSync } from 'node:fs';
import { resolveObjectURL } from 'node:buffer';
import { fileURLToPath } from 'node:url';
import { Worker as ThreadWorker } from 'node:worker_threads';

/** The thread's entry: sets up `self`, `postMessage` and 'message' events, then runs the script. */
const SCOPE = new URL('./node-worker-scope.js', import.meta.url);

/**
 * A Web Worker over a worker_thread. The script is a blob: URL made in this thread (its Blob goes
 * to the thread, which cannot resolve this thread's blob: URLs) or a module URL.
 */
class NodeWebWorker extends EventTarget {
  readonly #thread: ThreadWorker;

  constructor(url: string | URL, _options?: { type?: string }) {
    super();
    const href = String(url);
    const script = href.startsWith('blob:') ? resolveObjectURL(href) : href;
    if (script === undefined) throw new Error(`Worker: ${href} names no Blob of this thread`);
    // none of the parent's command-line options: `-e`/`--input-type` there would not apply to this
    // thread's entry (it stops at once), and the scripts it runs need none
    this.#thread = new ThreadWorker(SCOPE, { workerData: { script }, execArgv: [] });
    this.#thread.on('exit', (code) => this.dispatchEvent(Object.assign(new Event('exit'), { code })));
    this.#thread.on('message', (data: unknown) => this.dispatchEvent(new MessageEvent('message', { data })));
    this.#thread.on('error', (error: Error) => this.dispatchEvent(Object.assign(new Event('error'), { error, message: error.message })));
  }

  postMessage(data: unknown, transfer?: readonly Transferable[]): void {
    this.#thread.postMessage(data, transfer as never);
  }

  terminate(): void {
    void this.#thread.terminate();
  }

  /** Lets the process exit while this worker lives (a rayon worker never returns from its loop). */
  unref(): void {
    this.#thread.unref();
  }
}

/** Node's fetch without file: URLs refused: the helper reads its own module file through it. */
function fileFetch(original: typeof fetch): typeof fetch {
  return (input, init) => {
    const href = input instanceof Request ? input.url : String(input);
    if (!href.startsWith('file:')) return original(input, init);
    return Promise.resolve(new Response(readFileSync(fileURLToPath(href)), { headers: { 'content-type': 'text/javascript' } }));
  };
}

type Globals = { self?: unknown; Worker?: unknown; fetch: typeof fetch };

/**
 * Imports a module whose top level reads `self` (as the helper's does, to hear its worker's init
 * message): `self` is an inert EventTarget during the import where the runtime has none, and
 * removed after, so that other code does not take this process for a browser.
 */
export async function importWithSelf<T>(load: () => Promise<T>): Promise<T> {
  const g = globalThis as unknown as Globals;
  if (g.self !== undefined) return load();
  g.self = new EventTarget();
  try {
    return await load();
  } finally {
    delete g.self;
  }
}

/**
 * Runs `start` (the pool's start) with a global `Worker` and a fetch that reads file: URLs, both
 * restored when it settles; returns the workers it made, for the caller to unref once they are
 * ready (unref'd before, the process could exit while waiting for them).
 */
export async function withWebWorkers(start: () => Promise<unknown>): Promise<{ unref(): void }[]> {
  const g = globalThis as unknown as Globals;
  const saved = { Worker: g.Worker, fetch: g.fetch };
  const made: NodeWebWorker[] = [];
  // the helper waits for each worker's 'ready' and never hears of one that failed or stopped:
  // either ends the start here instead of a wait that would never end
  let stopped: (e: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    stopped = reject;
  });
  const onStop = (ev: Event) => stopped(new Error(`a thread-pool worker stopped while starting: ${(ev as Event & { message?: string }).message ?? 'exited'}`));
  g.Worker = class extends NodeWebWorker {
    constructor(url: string | URL, options?: { type?: string }) {
      super(url, options);
      made.push(this);
      this.addEventListener('error', onStop);
      this.addEventListener('exit', onStop);
    }
  };
  g.fetch = fileFetch(saved.fetch);
  try {
    await Promise.race([start(), failed]);
  } catch (e) {
    for (const w of made) w.terminate();
    throw e;
  } finally {
    if (saved.Worker === undefined) delete g.Worker;
    else g.Worker = saved.Worker;
    g.fetch = saved.fetch;
    for (const w of made) {
      w.removeEventListener('error', onStop);
      w.removeEventListener('exit', onStop);
    }
  }
  return made;
}
