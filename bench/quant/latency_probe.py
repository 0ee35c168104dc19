"""Probe files for bench/quant/minilm-latency.mjs: one of our quantized files with the run-time
differences to onnxruntime's q8 taken away one by one, outputs unchanged (checked with onnxruntime).

  /work/venv/bin/python bench/quant/latency_probe.py IN.onnx OUT.onnx [--float-tables] [--scalar-zp] [--value-info]

--float-tables  each 4-bit / 3-bit table (gather-int4.ts' unpacking) decoded into a float32 Gather
--scalar-zp     MatMulInteger's all-zero per-column B zero points replaced by one scalar zero
--value-info    ONNX shape inference's value_info written into the file (what onnxruntime's
                quantizer does; its SkipLayerNormalization fusion compares those symbolic dims)
"""
import argparse
import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

ap = argparse.ArgumentParser()
ap.add_argument('src'); ap.add_argument('dst')
ap.add_argument('--float-tables', action='store_true'); ap.add_argument('--scalar-zp', action='store_true'); ap.add_argument('--value-info', action='store_true')
a = ap.parse_args()
m = onnx.load(a.src)
g = m.graph
inits = {t.name: t for t in g.initializer}
producer = {o: n for n in g.node for o in n.output}

if a.float_tables:
    drop = set()
    for n in list(g.node):
        if n.op_type != 'Gather' or not n.name.endswith('_q4_gather'):
            continue
        stem = n.name[: -len('_q4_gather')]
        nodes = [x for x in g.node if x.name.startswith(stem + '_q4_')]
        scale_in = next(x for x in nodes if x.name.endswith('_q4_scales')).input[0]
        if scale_in in inits:
            scales = numpy_helper.to_array(inits[scale_in]).astype(np.float32)
        else:  # float16 scales behind a Cast
            nodes.append(producer[scale_in])
            scales = numpy_helper.to_array(inits[producer[scale_in].input[0]]).astype(np.float32)
        packed = numpy_helper.to_array(inits[n.input[0]])
        v, half = packed.shape
        kb = scales.shape[1]
        gw = 2 * half // kb
        # MatMulNBits' packing: even element in the low nibble, code + 8
        codes = np.stack([(packed & 15).astype(np.int32) - 8, (packed >> 4).astype(np.int32) - 8], -1).reshape(v, kb, gw)
        table = (codes * scales[:, :, None]).reshape(v, kb * gw)
        cut = [x for x in nodes if x.name.endswith('_q4_slice')]
        k = int(numpy_helper.to_array(inits[cut[0].input[2]])[0]) if cut else kb * gw
        out = (cut or [x for x in nodes if x.name.endswith('_q4_row')])[0].output[0]
        name = stem.strip('/').replace('/', '_') + '_float_table'
        g.initializer.append(numpy_helper.from_array(np.ascontiguousarray(table[:, :k], dtype=np.float32), name))
        g.node.insert(list(g.node).index(n), helper.make_node('Gather', [name, n.input[1]], [out], name=stem + '_float', axis=0))
        drop.update(x.name for x in nodes)
    kept = [x for x in g.node if x.name not in drop]
    del g.node[:]
    g.node.extend(kept)

if a.scalar_zp:
    g.initializer.append(numpy_helper.from_array(np.array(0, dtype=np.int8), 'probe_b_zero'))
    for n in g.node:
        if n.op_type == 'MatMulInteger' and len(n.input) > 3 and n.input[3] in inits:
            z = numpy_helper.to_array(inits[n.input[3]])
            if z.dtype == np.int8 and not z.any():
                n.input[3] = 'probe_b_zero'

used = {i for n in g.node for i in n.input}
kept = [t for t in g.initializer if t.name in used]
del g.initializer[:]
g.initializer.extend(kept)
if a.value_info:
    m = shape_inference.infer_shapes(m)
onnx.checker.check_model(m)
onnx.save(m, a.dst)
