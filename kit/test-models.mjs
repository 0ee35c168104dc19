// The small models committed under tests/data/models (written by tests/gen/), as bytes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../tests/data/models');
export const modelBytes = (name) => new Uint8Array(fs.readFileSync(path.join(MODELS_DIR, `${name}.onnx`)));
