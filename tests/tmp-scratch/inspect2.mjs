import protobuf from 'protobufjs';
import fs from 'fs';
import { ONNX_PROTO } from '/work/main/www/src/onnx-schema.js';
const root = protobuf.parse(ONNX_PROTO, { keepCase: true }).root;
const M = root.lookupType('onnx.ModelProto');
for (const f of process.argv.slice(2)) {
  const m = M.decode(fs.readFileSync(f));
  const g = m.graph;
  const cons = new Map();
  g.node.forEach(n => n.input.forEach((i, k) => { if(!cons.has(i)) cons.set(i, []); cons.get(i).push(n.op_type+'#'+k); }));
  let st = {};
  for (const n of g.node) if (n.op_type==='Constant') { const a=n.attribute[0]; const t=a.t; const key=a.name+':'+(t?t.data_type:'-')+':'+(t&&t.raw_data&&t.raw_data.length?'raw':(t&&t.float_data.length?'fd':'other')); st[key]=(st[key]||0)+1;
    const c=cons.get(n.output[0])||[]; if (t && c.some(x=>/^(Conv|ConvTranspose|Gemm|MatMul)#/.test(x))) process.stdout.write(n.output[0]+' '+t.dims.map(Number).join('x')+' '+c.join(',')+'; ');}
  console.log('\n', f, st, g.input.map(i=>i.name), g.output.map(i=>i.name));
}
