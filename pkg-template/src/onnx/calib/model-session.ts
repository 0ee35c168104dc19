// An onnxruntime session of a model. In Node, with a runner that reads model files
// (createSessionFromFile), a large model is written as a graph and a data file in a temporary
// directory and onnxruntime reads them itself: it maps the data file instead of copying it, and
// the model is never encoded whole in JS (issue 37, measured on SmolLM2-135M: from bytes a session
// took the 1.22 GB of the encode in JS, 0.9 GB in onnxruntime, and 0.6 GB stayed after its release;
// from the files 0.55 GB, 0.1 GB after; the outputs the same bits). The files go once the session
// is made. Anywhere else, or for a small model, the encoded bytes.
import type { OnnxModel } from '../model.js';
import { ELEM_SIZE, prod, toNum } from '../tensor-data.js';
import { sessionFilesOf } from '../files.js';
import type { ModelRunner, RunnerSession } from './ort-runner.js';

/** Models whose initializers hold at least this many bytes go through files where they can. */
export const SESSION_FILE_MIN_BYTES = 64 * 2 ** 20;

/** The bytes of the main graph's initializers, from their dims. */
function initializerBytes(model: OnnxModel): number {
  let n = 0;
  for (const t of model.graph.initializer ?? []) n += (ELEM_SIZE[t.data_type] ?? 0) * prod(t.dims.map(toNum));
  return n;
}

/** A session of `model` (see the file comment); `minBytes` lowers the size from which files are used (tests). */
export async function openSession(runner: ModelRunner, model: OnnxModel | Uint8Array, minBytes = SESSION_FILE_MIN_BYTES): Promise<RunnerSession> {
  if (model instanceof Uint8Array) return runner.createSession(model);
  const files = runner.createSessionFromFile && initializerBytes(model) >= minBytes ? await sessionFilesOf(model) : undefined;
  if (!files) return runner.createSession(model.encode());
  try {
    return await runner.createSessionFromFile!(files.file);
  } finally {
    // Where a mapped file cannot be removed (Windows), it stays in the temp directory.
    try { files.remove(); } catch { /* left for the system's temp cleanup */ }
  }
}
