// Writes pruned copies of the generated models (remove and mask, fraction 0.5) to a directory, for
// tests/gen/check_models.py (onnx.checker with full_check). Usage: node tests/gen/prune-models.mjs OUT_DIR
import fs from 'node:fs';
import path from 'node:path';
import { OnnxModel, removeChannels } from 'sparsekit-wasm/onnx';
import { MODELS_DIR } from '../onnx/models.mjs';

const out = process.argv[2] ?? '/tmp/sparsekit-pruned-models';
fs.mkdirSync(out, { recursive: true });
for (const f of fs.readdirSync(MODELS_DIR).filter((x) => x.endsWith('.onnx'))) {
  for (const apply of ['remove', 'mask']) {
    const m = OnnxModel.parse(new Uint8Array(fs.readFileSync(path.join(MODELS_DIR, f))));
    const r = removeChannels(m, { fraction: 0.5, roundTo: 1, apply });
    const file = path.join(out, f.replace('.onnx', `.${apply}.onnx`));
    fs.writeFileSync(file, m.encode());
    console.log(`${file}: ${r.groups.removed.length} groups cut, params ${r.params.before} -> ${r.params.after}`);
  }
}
