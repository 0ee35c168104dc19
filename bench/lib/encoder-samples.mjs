// A sentence encoder's folder read for the MiniLM benches (bench/text/minilm-recover.mjs,
// bench/quant/minilm*.mjs): the dense model, its bytes, its tokenizer, and lines -> padded samples.
import fs from 'node:fs';
import zlib from 'node:zlib';
import { loadOnnx, resolveTextModel, textSamples, runSet } from '#onnx-internal';
import { debianSections, knnAccuracy } from './debian-sections.mjs';

export async function encoderSamples(folder, seqLen = 32) {
  const files = await resolveTextModel(folder);
  const dense = await loadOnnx(files.model);
  const denseBytes = dense.encode();
  const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
  const samplesOf = (lines) => textSamples({ lines, tokenizer, seqLen, inputs: dense.inputs, outputs: dense.outputs, kind: 'encoder' });
  return { files, dense, denseBytes, tokenizer, samplesOf };
}

/** Brotli quality 9 of bytes (the MiniLM benches' served size). */
export const brotli9 = (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;

/**
 * The MiniLM probes' common start (bench/quant/minilm-grids.mjs, minilm-container.mjs): the
 * labelled task's sets, the dense model, its held-out outputs and its kNN accuracy.
 */
export async function minilmProbe(runner, folder = 'bench/out/models/all-MiniLM-L6-v2') {
  const { ref, held } = debianSections({ nCal: 16 });
  const { dense, denseBytes, samplesOf } = await encoderSamples(folder);
  const refSet = samplesOf(ref.map(([d]) => d)), heldSet = samplesOf(held.map(([d]) => d));
  const dH = await runSet(runner, denseBytes, heldSet.samples);
  const dAcc = knnAccuracy(await runSet(runner, denseBytes, refSet.samples), dH, ref, held);
  return { ref, held, dense, denseBytes, samplesOf, refSet, heldSet, dH, dAcc };
}
