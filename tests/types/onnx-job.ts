// README's job example as a TypeScript user writes it: onnxruntime's own namespace (node or web)
// passed as `ort`, which the package types structurally (it depends on neither runtime).
import { loadOnnx, saveOnnx, makeInputSet, runJob, sensitivity } from 'sparsekit-wasm/onnx';
import * as ort from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';

export async function prune(path: string): Promise<number | undefined> {
  const model = await loadOnnx(path);
  const { model: pruned, report } = await runJob(model, {
    mode: { kind: 'nm', nm: [2, 4] },
    method: 'sparsegpt',
    calibration: { samples: makeInputSet(model, { count: 64 }) },
    eval: { samples: makeInputSet(model, { count: 64, set: 'heldOut' }) },
    quantize: { scheme: 'int8' },
  }, { ort });
  await saveOnnx(pruned, 'model-2to4-int8.onnx');
  return report.fidelity?.score;
}

export async function table(bytes: Uint8Array) {
  const model = await loadOnnx(bytes);
  return sensitivity(model, { ort: ortWeb, eval: makeInputSet(model, { count: 4 }), mode: 'sparsity' });
}
