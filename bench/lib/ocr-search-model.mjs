// One PaddleOCR model as the search benches (bench/search/search-ocr.mjs, search-bytes.mjs) judge it:
// its bytes and parsed model, the held-out samples (rendered set `search`) with the original's
// outputs on them, and the task metric of any model's bytes on the separate rendered set `task`.
import { OnnxModel, runSet } from '#onnx-internal';
import { readTextSet, textSamples, taskMetrics } from '../../kit/ocr-metrics.mjs';

export async function ocrSearchModel(key, bytes, sets, runner) {
  const base = OnnxModel.parse(bytes);
  const evalSet = textSamples(readTextSet(sets.search), key);
  const taskSet = readTextSet(sets.task);
  const taskSamples = textSamples(taskSet, key);
  const reference = await runSet(runner, bytes, evalSet);
  const task = async (b) => taskMetrics(key, taskSet, await runSet(runner, b, taskSamples), taskSamples);
  return { base, evalSet, taskSamples, reference, task };
}
