import fs from 'node:fs';
import { OnnxModel, ModelProto, removeChannels } from 'sparsekit-wasm/onnx';
const b = fs.readFileSync(process.argv[2]);
const m = OnnxModel.parse(b);
const g = m.graph;
console.log('inits', g.initializer.map((t) => `${t.name}[${t.dims.map(Number)}] dt${t.data_type}`).join(' '));
for (const n of g.node) console.log(n.op_type, n.name, JSON.stringify(n.input), '->', JSON.stringify(n.output), n.attribute.map((a) => `${a.name}=${a.i ?? ''}${a.ints?.length ? a.ints : ''}`).join(','));
console.log('inputs', g.input.map((i) => i.name), 'outputs', g.output.map((o) => o.name));
try { removeChannels(m, { fraction: 0.5, roundTo: 1 }); } catch (e) { console.log(e.stack.split('\n').slice(0, 3).join('\n')); }
