// What a cancelled calibration throws: an AbortError (as fetch does) with code 'cancelled', so that
// callers tell it from a failure without importing this class; and the turn of the event loop that
// long loops over samples give between two runs, so that a cancel message, an abort or a signal
// handler gets in.
export class CancelledError extends Error {
  readonly code = 'cancelled';
  constructor() {
    super('Calibration cancelled');
    this.name = 'AbortError';
  }
}

/**
 * One turn of the event loop (a macrotask: onnxruntime-web's wasm backend can settle its promises
 * without ever leaving the microtask queue, and a worker's 'cancel' message is a task). setTimeout(0)
 * would wait at least 1 ms in Node and 4 ms in a page once nested (HTML's timer clamping), paid per
 * sample by loops over thousands of samples; setImmediate (Node) and a MessageChannel message
 * (pages, workers) give the turn without that wait (bench/calib/turn.mjs).
 */
export function turn(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((resolve) => { setImmediate(resolve); });
  if (typeof MessageChannel === 'function') {
    if (!channel) {
      channel = new MessageChannel();
      channel.port1.onmessage = () => waiting.shift()?.();
    }
    return new Promise((resolve) => { waiting.push(resolve); channel!.port2.postMessage(0); });
  }
  return new Promise((resolve) => { setTimeout(resolve, 0); });
}

let channel: MessageChannel | undefined;
const waiting: (() => void)[] = [];
