// Node only: what a model travels as over HTTP, measured from its encoded bytes (the model and its
// external data in one stream, as the CLI's transport figures count written files): raw bytes and
// one brotli stream, quality 11 up to 32 MiB and 9 above (the CLI's rule in bin/fidelity-cli.js).
import zlib from 'node:zlib';
import type { OnnxModel } from '../model.js';

export interface TransportSize { raw: number; brotli: number; brotliQuality: number }

/** Raw and brotli size of the model as saveOnnx would write it. */
export function modelTransportSize(model: OnnxModel, opts: { quality?: number } = {}): TransportSize {
  const parts: Uint8Array[] = [];
  const head = model.externalTensors().length
    ? model.encode({ location: `${model.fileName}.data`, sink: (b) => parts.push(new Uint8Array(b)) })
    : model.encode();
  const all = Buffer.concat([head, ...parts]);
  const quality = opts.quality ?? (all.length <= 32 * 1024 ** 2 ? 11 : 9);
  const brotli = zlib.brotliCompressSync(all, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: all.length },
  }).length;
  return { raw: all.length, brotli, brotliQuality: quality };
}
