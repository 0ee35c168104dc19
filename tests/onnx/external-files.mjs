// Test models written with external data, as exporters write models over 2 GB.
import fs from 'node:fs';
import path from 'node:path';

/**
 * `bytes` written to `file` with its initializers of at least `min` bytes (and with `constants` the
 * Constant nodes' values too) moved into one data file `file` + `suffix`; `ModelProto` is the
 * package's codec (#onnx-internal, after build()). Returns how many tensors went out.
 */
export function externalize(ModelProto, bytes, file, { min = 0, constants = false, suffix = '_data' } = {}) {
  const model = ModelProto.decode(bytes);
  const tensors = [...model.graph.initializer];
  if (constants) for (const n of model.graph.node) for (const a of n.attribute) if (a.t) tensors.push(a.t);
  const chunks = [];
  let off = 0;
  for (const t of tensors) {
    const raw = t.raw_data;
    if (!raw || raw.length < min) continue;
    chunks.push(raw);
    t.external_data = [{ key: 'location', value: path.basename(file) + suffix }, { key: 'offset', value: String(off) }, { key: 'length', value: String(raw.length) }];
    t.data_location = 1;
    t.raw_data = new Uint8Array(0);
    off += raw.length;
  }
  fs.writeFileSync(file + suffix, Buffer.concat(chunks.map((c) => Buffer.from(c))));
  fs.writeFileSync(file, ModelProto.encode(model).finish());
  return chunks.length;
}
