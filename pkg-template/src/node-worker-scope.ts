// The worker_thread side of node-worker.ts: the Web Worker global scope a module worker script
// expects (`self` is the global object, 'message' events on it, a global `postMessage`), then the
// script itself: wasm-bindgen-rayon's helper, which imports the threaded glue, instantiates it on
// the shared memory and enters its rayon worker loop.
import { parentPort, workerData } from 'node:worker_threads';

const port = parentPort;
if (!port) throw new Error('node-worker-scope runs as a worker_thread only');

const events = new EventTarget();
const scope = globalThis as unknown as Record<string, unknown>;
scope.self = globalThis;
scope.addEventListener = events.addEventListener.bind(events);
scope.removeEventListener = events.removeEventListener.bind(events);
scope.dispatchEvent = events.dispatchEvent.bind(events);
scope.postMessage = (data: unknown, transfer?: readonly Transferable[]) => port.postMessage(data, transfer as never);

// The helper instantiates the glue with positional arguments, which wasm-bindgen's glue answers
// with a deprecation warning on every worker; in a browser that lands in the console, here it
// would print once per worker on the CLI's stderr. Only that message is dropped.
const warn = console.warn.bind(console);
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].startsWith('using deprecated parameters for the initialization function')) return;
  warn(...args);
};

const script: Blob | string = workerData.script;
// A Blob (the helper's source, from the parent's blob: URL) runs as a data: URL module, which
// Node's loader imports (blob: it does not); the helper imports the glue by its absolute file: URL.
const url = typeof script === 'string'
  ? script
  : `data:text/javascript;base64,${Buffer.from(await script.arrayBuffer()).toString('base64')}`;
await import(url);
// Messages wait in the port until a listener exists, so none is lost before the script listens
// (as a Web Worker's queue holds them until its script has run).
port.on('message', (data: unknown) => events.dispatchEvent(new MessageEvent('message', { data })));
