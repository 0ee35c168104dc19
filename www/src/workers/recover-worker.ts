// Module worker of the recovery card: the package's recover() (sparsekit-wasm/onnx: statistics
// correction, least-squares refit, distillation with the training core, each kept only if the
// held-out fidelity does not drop) with onnxruntime-web as the runner, as search-worker does.
import * as ort from 'onnxruntime-web/wasm';
import init from 'sparsekit-wasm';
import { OnnxModel, makeOrtRunner, makeInputSet, recover, type OrtLike } from 'sparsekit-wasm/onnx';
import { serve, PlaygroundError } from '../protocol.js';
import type { RecoverApi } from './api.js';

ort.env.wasm.numThreads = 1;
const runner = makeOrtRunner(ort as unknown as OrtLike, { executionProviders: ['wasm'] });
let ready: Promise<void> | null = null;

serve<RecoverApi>({
  async run(msg, ctx) {
    await (ready ??= init({ threads: false }));
    if (!(msg.samples >= 1 && msg.heldOut >= 1)) throw new PlaygroundError('invalid_arguments', 'recovery needs at least one training and one held-out sample');
    if (!msg.steps.length) throw new PlaygroundError('invalid_arguments', 'choose at least one recovery step');
    const t0 = performance.now();
    const teacher = OnnxModel.parse(msg.teacher);
    const student = OnnxModel.parse(msg.student);
    // Training samples on calibration seeds, the fidelity on held-out seeds: never the same inputs.
    const samples = makeInputSet(teacher, { count: Math.floor(msg.samples) });
    const evalSamples = makeInputSet(teacher, { count: Math.floor(msg.heldOut), set: 'heldOut' });
    const report = await recover(student, teacher, samples, {
      ort: runner, evalSamples, steps: msg.steps, epochs: msg.epochs, minutes: msg.minutes > 0 ? msg.minutes : undefined,
      lr: msg.lr, batchSize: msg.batchSize, features: msg.features, signal: ctx.signal, onProgress: (p) => ctx.progress(p),
    });
    const bytes = student.encode();
    ctx.transfer.push(bytes.buffer);
    return { bytes, report, ms: performance.now() - t0 };
  },
});
