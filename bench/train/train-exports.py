"""Bench only (needs /work/venv: onnx, onnxruntime, numpy). Writes one model as the training core's
graph (the spec trainGraph builds, Constant nodes as initializers), seeded inputs (ids in 0..99,
masks 0/1 with p = 0.8, images N(0, 1)) and onnxruntime's outputs for them, as JSON for
bench/rust/src/bin/train_exports.rs, which counts the nodes the core runs per batch after folding and compares its
forward with onnxruntime's.

usage: python bench/train/train-exports.py MODEL.onnx OUT.json SEQ   (SEQ: the length of dynamic dims)"""
import onnx, json, sys, numpy as np, onnxruntime as ort
from onnx import numpy_helper
path, out, seq = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = onnx.load(path)
g = m.graph
inits = []
for t in g.initializer:
    a = numpy_helper.to_array(t)
    if a.dtype.kind in 'iub': inits.append({'name': t.name, 'dims': list(a.shape), 'ints': a.astype(np.int64).ravel().tolist()})
    else: inits.append({'name': t.name, 'dims': list(a.shape), 'floats': a.astype(np.float32).ravel().tolist()})
nodes = []
for i, n in enumerate(g.node):
    if n.op_type == 'Constant':
        a = numpy_helper.to_array(n.attribute[0].t)
        d = {'name': n.output[0], 'dims': list(a.shape)}
        if a.dtype.kind in 'iub': d['ints'] = a.astype(np.int64).ravel().tolist()
        else: d['floats'] = a.astype(np.float32).ravel().tolist()
        inits.append(d); continue
    attrs = {}
    for at in n.attribute:
        if at.type == 1: attrs[at.name] = at.f
        elif at.type == 2: attrs[at.name] = at.i
        elif at.type == 3: attrs[at.name] = at.s.decode()
        elif at.type == 6: attrs[at.name] = list(at.floats)
        elif at.type == 7: attrs[at.name] = list(at.ints)
        elif at.type == 4:
            a = numpy_helper.to_array(at.t)
            attrs[at.name] = {'dims': list(a.shape), 'values': a.astype(np.float64).ravel().tolist(), 'int': a.dtype.kind in 'iu'}
    nodes.append({'opType': n.op_type, 'name': n.name, 'inputs': list(n.input), 'outputs': list(n.output), 'attrs': attrs})
init_names = {i['name'] for i in inits}
inputs = [i for i in g.input if i.name not in init_names]
rng = np.random.default_rng(0)
feeds = {}
for i in inputs:
    et = i.type.tensor_type.elem_type
    dims = [d.dim_value if d.dim_value > 0 else (2 if k == 0 else seq) for k, d in enumerate(i.type.tensor_type.shape.dim)]
    if et == 7:
        feeds[i.name] = (rng.integers(0, 100, dims) if 'mask' not in i.name else (rng.random(dims) < 0.8)).astype(np.int64)
    else: feeds[i.name] = rng.standard_normal(dims).astype(np.float32)
s = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
outs = s.run(None, feeds)
json.dump({'spec': {'nodes': nodes, 'inputs': [i.name for i in inputs], 'outputs': [o.name for o in g.output], 'frozen': []},
           'inits': inits, 'feeds': [{'dims': list(v.shape), 'data': v.astype(np.float32).ravel().tolist()} for v in feeds.values()],
           'want': [{'dims': list(o.shape), 'data': o.astype(np.float32).ravel().tolist()} for o in outs]}, open(out, 'w'))
print('dumped', path, [v.shape for v in feeds.values()])
