// The protobufjs types of the ONNX schema, built once from schema.ts and fully resolved (the wire
// check walks the field types before the first decode).
import protobuf from 'protobufjs';
import { ONNX_PROTO } from './schema.js';

export const onnxRoot = protobuf.parse(ONNX_PROTO, { keepCase: true }).root.resolveAll();
/** The protobufjs type of onnx.ModelProto (decode / encode). */
export const ModelProto = onnxRoot.lookupType('onnx.ModelProto');
