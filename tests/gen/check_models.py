"""onnx.checker.check_model(full_check=True) (strict shape inference included) over the generated
models and over pruned copies (node tests/gen/prune-models.mjs DIR writes them).

usage: python tests/gen/check_models.py [PRUNED_DIR]"""
import glob
import os
import sys
import onnx

here = os.path.dirname(os.path.abspath(__file__))
files = sorted(glob.glob(os.path.join(here, "..", "data", "models", "*.onnx")))
if len(sys.argv) > 1:
    files += sorted(glob.glob(os.path.join(sys.argv[1], "*.onnx")))
failed = 0
for f in files:
    try:
        onnx.checker.check_model(onnx.load(f), full_check=True)
        print(f"ok    {os.path.basename(f)}")
    except Exception as e:  # the checker raises several types; each is a failure to report
        failed += 1
        print(f"FAIL  {os.path.basename(f)}: {str(e).splitlines()[0]}")
print(f"{len(files) - failed}/{len(files)} pass")
sys.exit(1 if failed else 0)
