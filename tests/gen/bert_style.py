"""A small BERT-style encoder as the torch ONNX export writes it with a dynamic batch and sequence:
embeddings (Gather) + LayerNorm; per layer Q/K/V MatMul + Add, reshaped to heads with a shape computed
as Shape -> Gather -> Unsqueeze -> Concat, Transpose, Q·Kᵀ / sqrt(d) + mask, Softmax, ·V, Transpose,
merged back with a computed shape, the output projection, residual Add + LayerNormalization, and the
FFN MatMul -> GELU (written with Erf) -> MatMul, residual, LayerNormalization. Layer 0 writes the head
count as -1 and the merged width as a constant, layer 1 the head count as a constant and the merged
width as -1 (both forms are exported by transformers versions). Random weights.

usage: python bert_style.py OUT.onnx [--hidden 64 --heads 4 --ffn 256 --layers 2 --max-pos 64]"""
import argparse
import numpy as np
from onnx import TensorProto, helper
from onnx_build import Graph, model, tensor_input


def build(hidden=64, heads=4, ffn=256, layers=2, vocab=100, max_pos=64, seed=1):
    g = Graph(seed)
    d = hidden // heads

    def linear(x, n_in, n_out, name):
        return g.op("Add", [g.op("MatMul", [x, g.weight(f"{name}.w", [n_in, n_out])], name=name), g.weight(f"{name}.b", [n_out], 0.1)], name=f"{name}_bias")

    def layer_norm(x, name):
        return g.op("LayerNormalization", [x, g.const(f"{name}.gamma", np.ones(hidden, np.float32) + g.rng.standard_normal(hidden).astype(np.float32) * 0.1),
                                           g.const(f"{name}.beta", g.rng.standard_normal(hidden).astype(np.float32) * 0.1)], name=name, axis=-1, epsilon=1e-12)

    def dim(x, i):
        return g.op("Unsqueeze", [g.op("Gather", [g.op("Shape", [x], name="shape"), g.ints("index", i)], name="gather_dim", axis=0), g.ints("axes", [0])], name="unsqueeze_dim")

    ids = "input_ids"
    seq = g.op("Gather", [g.op("Shape", [ids], name="shape"), g.ints("index", 1)], name="seq_len", axis=0)
    positions = g.op("Slice", [g.ints("position_ids", np.arange(max_pos)), g.ints("zero", [0]), g.op("Unsqueeze", [seq, g.ints("axes", [0])]), g.ints("axis0", [0])], name="positions")
    emb = g.op("Add", [g.op("Gather", [g.weight("word_embeddings", [vocab, hidden], 0.5), ids], name="word_emb"),
                       g.op("Gather", [g.weight("position_embeddings", [max_pos, hidden], 0.5), positions], name="pos_emb")], name="embeddings")
    h = layer_norm(emb, "emb_ln")
    # Mask (batch, 1, 1, seq): 0 where attended, -10000 elsewhere.
    m = g.op("Cast", [g.op("Unsqueeze", [g.op("Unsqueeze", ["attention_mask", g.ints("axes", [1])]), g.ints("axes", [2])])], to=TensorProto.FLOAT)
    mask = g.op("Mul", [g.op("Sub", [g.const("one", np.array(1, np.float32)), m]), g.const("neg", np.array(-10000, np.float32))], name="mask")
    for li in range(layers):
        p = f"layer{li}"
        heads_entry = g.ints("minus_one", [-1]) if li == 0 else g.ints("num_heads", [heads])
        split_shape = g.op("Concat", [dim(h, 0), dim(h, 1), heads_entry, g.ints("head_size", [d])], name="split_shape", axis=0)
        q, k, v = (g.op("Reshape", [linear(h, hidden, hidden, f"{p}.{n}"), split_shape], name=f"{n}_heads") for n in ("query", "key", "value"))
        q = g.op("Transpose", [q], perm=[0, 2, 1, 3])
        kt = g.op("Transpose", [k], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [v], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, kt], name="scores"), g.const("sqrt_d", np.array(np.sqrt(d), np.float32))]), mask])
        ctx = g.op("Transpose", [g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v], name="context")], perm=[0, 2, 1, 3])
        width_entry = g.ints("all_head_size", [hidden]) if li == 0 else g.ints("minus_one", [-1])
        merged = g.op("Reshape", [ctx, g.op("Concat", [dim(ctx, 0), dim(ctx, 1), width_entry], name="merge_shape", axis=0)], name="merge_heads")
        h = layer_norm(g.op("Add", [linear(merged, hidden, hidden, f"{p}.attn_out"), h], name="residual"), f"{p}.attn_ln")
        u = linear(h, hidden, ffn, f"{p}.ffn_in")
        gelu = g.op("Mul", [g.op("Mul", [u, g.op("Add", [g.op("Erf", [g.op("Div", [u, g.const("sqrt2", np.array(np.sqrt(2), np.float32))])]), g.const("one", np.array(1, np.float32))])]), g.const("half", np.array(0.5, np.float32))], name="gelu")
        h = layer_norm(g.op("Add", [linear(gelu, ffn, hidden, f"{p}.ffn_out"), h], name="residual"), f"{p}.ffn_ln")
    gr = g.graph("bert_style", [tensor_input("input_ids", ["batch", "sequence"], TensorProto.INT64), tensor_input("attention_mask", ["batch", "sequence"], TensorProto.INT64)],
                 [helper.make_tensor_value_info(h, TensorProto.FLOAT, ["batch", "sequence", hidden])])
    return model(gr, opset=17)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--max-pos", type=int, default=64)
    a = ap.parse_args()
    import onnx
    onnx.save(build(a.hidden, a.heads, a.ffn, a.layers, max_pos=a.max_pos), a.out)
