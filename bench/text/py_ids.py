# Bench only (needs Python `tokenizers`, e.g. /work/venv/bin/python): the ids Python's Rust-backed
# tokenizers gives for each line, with the special tokens the post-processor adds.
# Usage: py_ids.py TOKENIZER_JSON LINES_JSON OUT_JSON   (LINES_JSON: a JSON array of strings)
import json
import sys

from tokenizers import Tokenizer

tok = Tokenizer.from_file(sys.argv[1])
# the tokenizer.json's own truncation / padding would cut or pad lines: the check compares whole lines
tok.no_truncation()
tok.no_padding()
lines = json.load(open(sys.argv[2], encoding="utf-8"))
ids = [e.ids for e in tok.encode_batch(lines, add_special_tokens=True)]
json.dump(ids, open(sys.argv[3], "w", encoding="utf-8"), separators=(",", ":"))
