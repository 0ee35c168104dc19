// Errors of the ONNX layer: SparseKitError with a stable `.code` from the core's list, plus a
// finer `.reason` (why the file was refused) for messages and tests. docs/errors.md lists them.
import { SparseKitError } from 'sparsekit-wasm';

/** Why an ONNX input was refused. */
export type OnnxReason =
  | 'not_onnx'
  | 'truncated'
  | 'corrupt'
  | 'missing_external'
  | 'unsupported'
  | 'bad_mask'
  | 'no_file'
  /** Calibration inputs that do not fit the model (files, shapes, types). */
  | 'bad_calibration'
  /** A tensor dim negative, not an integer, or a product beyond 2^53 (or an empty tensor's other dims too large). */
  | 'bad_dims'
  /** A tensor's data (raw_data, a typed field, fp16 bytes, external length) does not match its dims. */
  | 'size_mismatch'
  /** A tensor data type ONNX does not define. */
  | 'bad_dtype'
  /** External data that is malformed (no location, an offset or length that is no byte count) or lies outside its file. */
  | 'bad_external'
  /** A node input or graph output that nothing defines. */
  | 'dangling_input'
  /** Nodes that depend on each other in a cycle. */
  | 'cycle'
  /** A value, input or initializer name defined twice. */
  | 'duplicate_name'
  /** Messages or subgraphs nested beyond the limits. */
  | 'too_deep'
  /** More decoded objects than the limits allow; a calibration segment over protobuf's 2 GiB of weights. */
  | 'too_large'
  /** An attribute value that cannot be right (Conv group). */
  | 'bad_attribute'
  /** A standard op with fewer inputs than its schema requires. */
  | 'bad_node'
  /** A parse option out of range (limits). */
  | 'bad_option'
  /** Pruning asked of a model whose weights are all quantized (dequantizeModel first). */
  | 'quantized'
  /** A quantization scheme this module cannot read or serve, named in the message. */
  | 'unsupported_scheme'
  /** onnxruntime or the training core failed while running the model (the node is named). */
  | 'run_failed';

export class OnnxError extends SparseKitError {
  readonly reason: OnnxReason;
  constructor(reason: OnnxReason, message: string, code = 'invalid_value') {
    // The core's ErrorCode union is the authority; the codes used here are members of it.
    super(code as ConstructorParameters<typeof SparseKitError>[0], message);
    this.name = 'OnnxError';
    this.reason = reason;
  }
}

/** A job option that cannot be right; `option` is its path in the PruneJob, `detail` the rest of the message. */
export class JobError extends OnnxError {
  readonly option: string;
  readonly detail: string;
  constructor(option: string, detail: string, code = 'invalid_arguments') {
    super('bad_option', `${option} ${detail}`, code);
    this.name = 'JobError';
    this.option = option;
    this.detail = detail;
  }
}

