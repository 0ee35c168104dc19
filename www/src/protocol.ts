// The one message protocol between the page and its Web Workers (pruning, onnxruntime-web runs,
// calibration, channel removal). Each worker declares its API as a map op -> {req, res, progress};
// the page calls it through WorkerClient.request() (job ids, progress, cancel), the worker answers
// through serve(). Errors cross the boundary as WireError, which keeps what callers branch on:
// `name`, `code` (SparseKitError / OnnxError / the page's own codes) and OnnxError's `reason`.

/** One operation of a worker: its request payload, its result and (optionally) its progress events. */
export interface OpSpec { req: unknown; res: unknown; progress?: unknown }
/** A worker's API: operation name -> OpSpec. */
export type WorkerApi = Record<string, OpSpec>;

type ProgressOf<S extends OpSpec> = S extends { progress: infer P } ? P : never;

/** An error as it crosses a worker boundary (structured clone drops an Error's own fields). */
export interface WireError {
  name: string;
  message: string;
  code: string | null;
  /** OnnxError's finer reason (why a file was refused), when there is one. */
  reason: string | null;
  /** JobError's option (a PruneJob path such as 'mode.nm'), so the page can name its own field. */
  option?: string | null;
}

/** page -> worker */
export type ToWorker =
  | { kind: 'request'; id: number; op: string; payload: unknown }
  | { kind: 'cancel'; id: number };

/** worker -> page */
export type FromWorker =
  | { kind: 'progress'; id: number; progress: unknown }
  | { kind: 'result'; id: number; result: unknown }
  | { kind: 'error'; id: number; error: WireError };

/** An error received from a worker (or raised by the client): the wire fields as properties. */
export class WorkerError extends Error {
  readonly code: string | null;
  readonly reason: string | null;
  readonly option: string | null;
  constructor(w: WireError) {
    super(w.message);
    this.name = w.name;
    this.code = w.code;
    this.reason = w.reason;
    this.option = w.option ?? null;
  }
}

/** The single error serialiser of the playground: every worker sends its errors through it. */
export function toWire(e: unknown): WireError {
  const o = (typeof e === 'object' && e !== null ? e : {}) as { name?: unknown; message?: unknown; code?: unknown; reason?: unknown; option?: unknown };
  const str = (x: unknown): string | null => (typeof x === 'string' && x ? x : null);
  return {
    name: str(o.name) ?? 'Error',
    message: typeof o.message === 'string' ? o.message : String(e),
    code: str(o.code),
    reason: str(o.reason),
    option: str(o.option),
  };
}

/** What the page's own errors carry: a stable code next to the message (as SparseKitError does). */
export class PlaygroundError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'PlaygroundError';
  }
}

/** Options of one request. */
export interface RequestOptions<P> {
  transfer?: Transferable[];
  onProgress?: (p: P) => void;
  /** Aborting sends a cancel to the worker; the request then rejects with its error (code 'cancelled'). */
  signal?: AbortSignal;
}

interface Pending { resolve: (v: unknown) => void; reject: (e: Error) => void; onProgress?: (p: never) => void; signal?: AbortSignal }

/**
 * The page's side of a worker: one request() for every operation of its API. restart() replaces the
 * worker (a job that cannot be cancelled cooperatively, or a worker that failed to start): pending
 * requests reject with code 'cancelled'. A worker that fails to load rejects them with 'worker_failed'.
 */
export class WorkerClient<A extends WorkerApi> {
  private worker: Worker;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly create: () => Worker) {
    this.worker = this.spawn();
  }

  private spawn(): Worker {
    const w = this.create();
    w.addEventListener('message', (ev: MessageEvent<FromWorker>) => this.receive(ev.data));
    w.addEventListener('error', (ev: ErrorEvent) => {
      ev.preventDefault();
      this.failAll({ name: 'WorkerError', code: 'worker_failed', reason: null, message: ev.message || 'the worker failed to start' });
    });
    return w;
  }

  private receive(m: FromWorker): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.kind === 'progress') { p.onProgress?.(m.progress as never); return; }
    this.pending.delete(m.id);
    if (m.kind === 'error') p.reject(new WorkerError(m.error)); else p.resolve(m.result);
  }

  private failAll(error: WireError): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(new WorkerError(error));
  }

  request<K extends keyof A & string>(op: K, payload: A[K]['req'], opts: RequestOptions<ProgressOf<A[K]>> = {}): Promise<A[K]['res']> {
    const id = ++this.nextId;
    const { signal } = opts;
    return new Promise<A[K]['res']>((resolve, reject) => {
      if (signal?.aborted) { reject(cancelled()); return; }
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, onProgress: opts.onProgress as ((p: never) => void) | undefined, signal });
      signal?.addEventListener('abort', () => { if (this.pending.has(id)) this.post({ kind: 'cancel', id }); }, { once: true });
      this.post({ kind: 'request', id, op, payload }, opts.transfer);
    });
  }

  private post(m: ToWorker, transfer: Transferable[] = []): void {
    this.worker.postMessage(m, transfer);
  }

  /** Terminates the worker and starts a fresh one; pending requests reject as cancelled. */
  restart(): void {
    this.worker.terminate();
    this.failAll(toWire(cancelled()));
    this.worker = this.spawn();
  }

  /**
   * Aborts the requests made under `controller`. A worker only sees the abort between its own awaits,
   * so a request still running after `graceMs` (inside one long onnxruntime call or training step) is
   * ended by restarting the worker.
   */
  cancel(controller: AbortController, graceMs = CANCEL_GRACE_MS): void {
    controller.abort();
    setTimeout(() => {
      if ([...this.pending.values()].some((p) => p.signal === controller.signal)) this.restart();
    }, graceMs);
  }

  /** Whether a request is in flight. */
  get busy(): boolean { return this.pending.size > 0; }
}

/** How long a cancel waits for the worker to stop by itself before restarting it. */
const CANCEL_GRACE_MS = 8000;

const cancelled = () => Object.assign(new Error('cancelled'), { name: 'AbortError', code: 'cancelled' });

/** What a worker's handler gets besides its payload. */
export interface JobContext<P> {
  /** Aborted when the page cancels this job. */
  signal: AbortSignal;
  progress(p: P): void;
  /** Buffers of the result to transfer instead of copy. */
  transfer: Transferable[];
}

/** A worker's handlers: one per operation of its API. */
export type Handlers<A extends WorkerApi> = {
  [K in keyof A]: (payload: A[K]['req'], ctx: JobContext<ProgressOf<A[K]>>) => Promise<A[K]['res']> | A[K]['res'];
};

/** The minimal worker scope serve() needs (so that this module type-checks with the DOM lib). */
interface WorkerScope {
  onmessage: ((ev: MessageEvent<ToWorker>) => unknown) | null;
  postMessage(m: FromWorker, transfer?: Transferable[]): void;
}

/** The worker's side: runs each request's handler, reports its progress, result or error. */
export function serve<A extends WorkerApi>(handlers: Handlers<A>, scope: WorkerScope = self as unknown as WorkerScope): void {
  const jobs = new Map<number, AbortController>();
  scope.onmessage = async (ev) => {
    const m = ev.data;
    if (m.kind === 'cancel') { jobs.get(m.id)?.abort(); return; }
    const controller = new AbortController();
    jobs.set(m.id, controller);
    const ctx: JobContext<unknown> = {
      signal: controller.signal,
      progress: (progress) => scope.postMessage({ kind: 'progress', id: m.id, progress }),
      transfer: [],
    };
    try {
      const handler = (handlers as Record<string, (p: unknown, c: JobContext<unknown>) => unknown>)[m.op];
      if (!handler) throw new PlaygroundError('unknown_operation', `this worker has no operation "${m.op}"`);
      const result = await handler(m.payload, ctx);
      scope.postMessage({ kind: 'result', id: m.id, result }, [...new Set(ctx.transfer)]);
    } catch (e) {
      scope.postMessage({ kind: 'error', id: m.id, error: toWire(e) });
    } finally {
      jobs.delete(m.id);
    }
  };
}
