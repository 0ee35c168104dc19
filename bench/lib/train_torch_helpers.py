"""The graph helpers of bench/train/train-torch.py (constants_as_initializers, with_shapes) for the
benches that convert the same ONNX graphs for torch without running train-torch.py's stdin loop:
its source up to that loop is executed in a namespace of its own."""
import os

TRAIN_TORCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train", "train-torch.py")


def load_helpers():
    src = open(TRAIN_TORCH).read()
    src = src[: src.index("for line in sys.stdin")]
    ns = {}
    exec(compile(src, "train-torch.py", "exec"), ns)
    return ns["constants_as_initializers"], ns["with_shapes"]


def static_for_torch(m, dims):
    """The graph as torch converts it: opset >= 13, its constants as initializers, the first input's
    shape fixed to `dims`, every value's shape inferred."""
    import onnx.version_converter

    constants_as_initializers, with_shapes = load_helpers()
    if m.opset_import[0].version < 13:
        m = onnx.version_converter.convert_version(m, 13)
    m = constants_as_initializers(m)
    for d, v in zip(m.graph.input[0].type.tensor_type.shape.dim, dims):
        d.ClearField("dim_param")
        d.dim_value = v
    return with_shapes(m, dims)
