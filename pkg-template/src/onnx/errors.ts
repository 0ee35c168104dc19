// Errors of the ONNX layer: SparseKitError with a stable `.code` from the core's list, plus a
// finer `.reason` (why the file was refused) for messages and tests.
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
  | 'bad_calibration';

export class OnnxError extends SparseKitError {
  readonly reason: OnnxReason;
  constructor(reason: OnnxReason, message: string, code = 'invalid_value') {
    // The core's ErrorCode union is the authority; the codes used here are members of it.
    super(code as ConstructorParameters<typeof SparseKitError>[0], message);
    this.name = 'OnnxError';
    this.reason = reason;
  }
}
