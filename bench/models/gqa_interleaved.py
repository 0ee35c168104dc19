# Bench only (needs /work/venv: torch, onnx; never run by the test command). A decoder block written in
# torch the way GPT-J / GLM-style models write attention, exported by torch.onnx: grouped-query
# attention (4 query heads of 8 over 2 KV heads, the repeat as expand + reshape), interleaved RoPE
# (x[..., ::2] / x[..., 1::2], stack, flatten), a KV cache (past_key / past_value concatenated with the
# new keys, present_key / present_value out), SwiGLU. Random weights.
#   python bench/models/gqa_interleaved.py [--out tests/data/models]  ->  gqa-interleaved-cache.onnx
import argparse
import os

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--out", default="tests/data/models")
out = os.path.join(ap.parse_args().out, "gqa-interleaved-cache.onnx")
torch.manual_seed(0)
H, KV, D, DIM = 4, 2, 8, 32
class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.q = nn.Linear(DIM, H * D, bias=False); s.k = nn.Linear(DIM, KV * D, bias=False); s.v = nn.Linear(DIM, KV * D, bias=False)
        s.o = nn.Linear(H * D, DIM, bias=False); s.up = nn.Linear(DIM, 64, bias=False); s.gate = nn.Linear(DIM, 64, bias=False); s.down = nn.Linear(64, DIM, bias=False)
    def rope(s, x, cos, sin):  # interleaved: pairs (x[2i], x[2i+1])
        x1, x2 = x[..., ::2], x[..., 1::2]
        rot = torch.stack((-x2, x1), dim=-1).flatten(-2)
        return x * cos + rot * sin
    def forward(s, h, cos, sin, pk, pv):
        B, S, _ = h.shape
        q = s.q(h).view(B, S, -1, D).transpose(1, 2)
        k = s.k(h).view(B, S, -1, D).transpose(1, 2)
        v = s.v(h).view(B, S, -1, D).transpose(1, 2)
        q, k = s.rope(q, cos, sin), s.rope(k, cos, sin)
        k = torch.cat([pk, k], dim=2); v = torch.cat([pv, v], dim=2)
        n = H // KV
        kr = k[:, :, None].expand(B, KV, n, k.shape[2], D).reshape(B, KV * n, k.shape[2], D)
        vr = v[:, :, None].expand(B, KV, n, v.shape[2], D).reshape(B, KV * n, v.shape[2], D)
        a = torch.softmax(q @ kr.transpose(2, 3) / D ** 0.5, dim=-1) @ vr
        h = h + s.o(a.transpose(1, 2).reshape(B, S, -1))
        h = h + s.down(nn.functional.silu(s.gate(h)) * s.up(h))
        return h, k, v
m = Block().eval()
S, P = 5, 3
args = (torch.randn(1, S, DIM), torch.randn(1, 1, S, D), torch.randn(1, 1, S, D), torch.randn(1, KV, P, D), torch.randn(1, KV, P, D))
torch.onnx.export(m, args, out, input_names=['h', 'cos', 'sin', 'past_key', 'past_value'], output_names=['y', 'present_key', 'present_value'],
  dynamic_axes={'h': {1: 's'}, 'cos': {2: 's'}, 'sin': {2: 's'}, 'past_key': {2: 'p'}, 'past_value': {2: 'p'}, 'y': {1: 's'}, 'present_key': {2: 't'}, 'present_value': {2: 't'}}, opset_version=17, dynamo=False)
print(f'{out}: {os.path.getsize(out) / 1e3:.1f} kB')
