import protobuf from 'protobufjs';
import fs from 'fs';
import { ONNX_PROTO } from '/work/main/www/src/onnx-schema.js';
const root = protobuf.parse(ONNX_PROTO, { keepCase: true }).root;
const M = root.lookupType('onnx.ModelProto');
for (const f of process.argv.slice(2)) {
  const buf = fs.readFileSync(f);
  let t = Date.now();
  const m = M.decode(buf);
  console.log(f, 'decode ms', Date.now() - t, 'ir', String(m.ir_version), m.opset_import.map(o=>o.domain+':'+o.version));
  const g = m.graph;
  const ops = {}; for (const n of g.node) ops[n.op_type] = (ops[n.op_type]||0)+1;
  console.log(ops);
  const cons = new Map();
  g.node.forEach(n => n.input.forEach((i, k) => { if(!cons.has(i)) cons.set(i, []); cons.get(i).push(n.op_type+'#'+k); }));
  const dt = {}; let nraw=0, nfd=0;
  for (const ini of g.initializer) { dt[ini.data_type]=(dt[ini.data_type]||0)+1; if (ini.raw_data && ini.raw_data.length) nraw++; if (ini.float_data.length) nfd++; }
  console.log('inits', g.initializer.length, dt, 'raw', nraw, 'fd', nfd);
  for (const ini of g.initializer) { const c = cons.get(ini.name)||[]; if (c.some(x=>/^(Conv|Gemm|MatMul)#/.test(x)) && ini.dims.length>=2) process.stdout.write(ini.name+' '+ini.dims.map(Number).join('x')+' '+c.join(',')+'; '); }
  console.log();
  t = Date.now();
  const out = M.encode(m).finish();
  console.log('encode ms', Date.now()-t, 'identical', Buffer.compare(Buffer.from(out), buf) === 0, out.length, buf.length);
}
