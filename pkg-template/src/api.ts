// The public API shared by every entry (browser, Node ESM, Node CJS): one module per concept.
// The entries add init() and initThreadPool(), which differ in how they load the wasm.
export { SparseKitError, ShapeMismatchError, CouplingError, ERROR_CODES, type ErrorCode } from './errors.js';
export { threads, variant, numThreads, probeThreads, environment } from './runtime.js';
export type { Variant, InitOptions, WasmPaths, WasmSource, Environment } from './runtime.js';
export type { Shaped, Floats, Mask, GridInput } from './convert.js';
export { Owned } from './owned.js';
export { Param } from './param.js';
export { View, type BlockViewOptions } from './view.js';
export { BlockSpec, BlockCoupling, type Values, type SoftThresholdOptions } from './block.js';
export { ScopeSpec, ScopeCoupling, type ScopeValues, type ProgressCallback, type HardThresholdOptions, type ScopeMaskOptions } from './scope.js';
export { getNmpruneInfo, computeValid1dPatterns, mn1dBest, m4n2_1d, createAspMask, fill, reshape1d, MagnitudeSearcher, type AspPattern } from './nm.js';
export { toCsr, toBsr, toNm24, sparseToDense, sparseBytes, searchPermutation, type CsrMatrix, type BsrMatrix, type Nm24Matrix, type PermutationOptions } from './export.js';
export { Trainer, type TrainGraph, type TrainNode, type TrainInit, type TrainAttr, type TrainTensorAttr, type TrainerOptions, type Batch, type OutputLoss, type ProxOptions } from './train.js';
export { Hessian, wandaScores, sparseGpt, relReconError, type ConvGeometry, type SparseGptOptions } from './calib.js';
export { gptq, roundToNearest, type GptqOptions, type QuantGridOptions, type QuantizedWeights } from './quant.js';
export {
  DEFAULT_CONFIG, DEFAULT_RULE, NM24_RULE, describeRule, nmGroupLength, nm24ConfigFor, magnitudeAllocation, defaultPlan, fitBlock,
  type LayerConfig, type PlanRule, type PlanWeight, type PlanItem, type Plan, type MagnitudeAllocation,
} from './plan.js';
