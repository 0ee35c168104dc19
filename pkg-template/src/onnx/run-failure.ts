// A failure inside onnxruntime or the training core, as the user reads it: one typed line
// (OnnxError, reason 'run_failed') that names the node, instead of an engine's multi-line text
// or a stack. onnxruntime's messages carry the node as "... running Gather node. Name:'/emb/Gather'
// Status Message: indices element out of data bounds, idx=996 must be within ..."; the training
// core's errors already name it ("Gather 'emb': index 996 is out of range [-160, 159] ...") and keep
// their code.
import { SparseKitError } from 'sparsekit-wasm';
import { OnnxError } from './errors.js';

/** Which engine failed. */
export type RunEngine = 'onnxruntime' | 'training core';

const ORT_NODE = /running (\S+) node\.\s*Name:\s*'([^']*)'\s*Status Message:\s*(.*)/s;

/** The first line of an engine's message, its "Error:" prefixes and trailing stack dropped. */
function firstLine(text: string): string {
  return text.split('\n').map((l) => l.trim()).find((l) => l && !l.startsWith('at ')) ?? text.trim();
}

/** `e` as a typed one-line OnnxError; an OnnxError is returned as it is (already the user's line). */
export function runFailure(e: unknown, engine: RunEngine, during?: string): OnnxError {
  if (e instanceof OnnxError) return e;
  const raw = String((e as Error)?.message ?? e);
  const m = ORT_NODE.exec(raw);
  const what = m ? `${m[1]} node "${m[2]}": ${firstLine(m[3])}` : firstLine(raw);
  const where = during ? ` (${during})` : '';
  const code = e instanceof SparseKitError ? e.code : 'invalid_value';
  // an op the core does not implement is a refusal of the model, not a failed run
  if (code === 'unsupported_op') return new OnnxError('unsupported', `${engine}: ${what}`, code);
  return new OnnxError('run_failed', `${engine} failed${where}: ${what}`, code);
}

/** Runs `fn`, turning what it throws into {@link runFailure}'s line. */
export async function guardRun<T>(engine: RunEngine, during: string | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw runFailure(e, engine, during);
  }
}

/** {@link guardRun} for a synchronous call (the training core's steps). */
export function guardSync<T>(engine: RunEngine, during: string | undefined, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw runFailure(e, engine, during);
  }
}
