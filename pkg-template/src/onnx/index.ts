// sparsekit-wasm/onnx: the public API of the ONNX module — read and write models, inspect them,
// build and run a pruning job (or its parts: one-shot pruning, channel removal, calibration, recipes,
// the search to a fidelity floor, recovery), measure fidelity, and the errors. Everything else is
// internal (internal.ts serves the repository's tests and benches).

// Models and files.
export { OnnxModel, MemoryExternalSource, transpose } from './model.js';
export type { OnnxWeight, WeightView, ParseOptions, ExternalSource, SpillStore, ValueInfo } from './model.js';
export { loadOnnx, saveOnnx, readCalibrationDir, transportSize, readTextSamples, resolveTextModel, saveTransformersFolder } from './files.js';
export type { ServedSplit } from './served-bytes.js';
export type { TextModelFiles, TextFileOptions, ResolveOptions } from './text/text-files.js';
export type { TjsOutput, TjsDtype } from './text/tjs-layout.js';
export type { SavedFolder } from './text/tjs-folder.js';
export type { TransportSizeOptions, TransportSize } from './transport-size.js';
export type { CalibrationDirOptions } from './calib/samples-dir.js';

// Errors.
export { OnnxError } from './errors.js';
export type { OnnxReason } from './errors.js';
export { CancelledError } from './calib/cancel.js';

// The job: one typed pruning run, what the CLI and the playground build.
export { runJob, checkJob, parseNm, JobError, FloorError, JOB_DEFAULTS } from './job/index.js';
export type { PruneJob, JobMode, JobMethod, JobTraining, JobEnv, JobProgress, JobResult, JobReport, JobPruneReport, JobFidelity } from './job/index.js';

// Its parts: one-shot pruning, channel groups, calibration-aware pruning.
export { pruneSparsity, pruneNm } from './prune.js';
export type { PruneOptions, PruneReport, LayerReport, Scope, ProgressFn } from './prune.js';
export { findChannelGroups, removeChannels } from './channels.js';
export type { ChannelGroup, ChannelOptions, ChannelAnalysis, GroupMember, ChannelReport } from './channels.js';
export { calibratePrune } from './calib/calibrate.js';
export type { CutStore } from './calib/cut-store.js';
export type { CalibrateOptions, CalibReport, CalibLayerReport, CalibProgress, CalibTime } from './calib/calibrate.js';
export { removeChannelsCalibrated } from './calib/calibrated-channels.js';
export type { CalibratedChannelOptions, ConsumerReport } from './calib/calibrated-channels.js';
export { findLayers } from './calib/layers.js';
export type { CalibLayer } from './calib/layers.js';
export type { Criterion } from './calib/layer-prune.js';
export { CALIB_DEFAULTS } from './calib/defaults.js';

// Samples: generated from the graph, or read (npy, png).
export { makeInputSet, resolveInputShape, checkGeneratedShape, isImageShape, isDensePrediction, MAX_GENERATED_ELEMENTS, ORT_TYPES } from './calib/inputs.js';
export type { FeedTensor, InputSample, InputSetOptions } from './calib/inputs.js';
export { parseNpy, npyToFeed } from './calib/npy.js';
export { decodePng } from './calib/png.js';
export { renderPage } from './calib/doc-pages.js';
export { prng } from './calib/prng.js';

// Text in: text + the model's tokenizer.json -> samples (windows for a decoder, one padded line per
// sample for an encoder); held-out and calibration samples compared as samples.
export { textSamples } from './text/text-samples.js';
export type { TextSampleOptions, TextSampleSet } from './text/text-samples.js';
export { loadTokenizer } from './text/tokenizer.js';
export type { TextTokenizer, TokenizerSource } from './text/tokenizer.js';
export type { UnreachableRowsReport } from './text/unreachable-tokens.js';
export { checkDisjointSamples } from './calib/sample-overlap.js';

// Running models and judging them: label-free fidelity per output.
export { makeOrtRunner } from './calib/ort-runner.js';
export type { OrtLike, ModelRunner, RunnerSession, RunOutput } from './calib/ort-runner.js';
export { runSet, compareSets, evaluate } from './calib/evaluate.js';
export type { Outputs, OutputArray, SetComparison, EvaluateOptions, EvaluateReport } from './calib/evaluate.js';
export { fidelity, detectKind, OUTPUT_KINDS, lowerBound } from './fidelity/index.js';
export type { OutputKind, OutputFidelity, FidelityReport, FidelityOptions, DetectionOptions, DenseMapOptions, BoundedFidelity } from './fidelity/index.js';

// Recipes (per-layer settings as JSON), sensitivity and the search to a fidelity floor.
export { parseRecipe } from './recipe/recipe.js';
export type { Recipe, RecipeRule, Setting, SettingScope, Pattern } from './recipe/recipe.js';
export { planRecipe, applyRecipe } from './recipe/apply.js';
export type { ApplyRecipeOptions, RecipeReport } from './recipe/apply.js';
export { sensitivity } from './search/sensitivity.js';
export type { SensitivityOptions, SensitivityResult, SensitivityUnit, SensitivityCell, SearchMode } from './search/sensitivity.js';
export type { Objective } from './search/allocate.js';
export { compress } from './search/compress.js';
export type { CompressOptions, CompressResult, PlanStep } from './search/compress.js';

// Quantization: int8 / int4 (MatMulNBits) weights in the forms onnxruntime serves; quantized models
// read back to float (dequantizeModel) and written again in their scheme (requantize).
export { quantizeModel } from './quant/quantize.js';
export type { QuantizeOptions, QuantReport, QuantLayerReport, QuantScheme } from './quant/quantize.js';
export { dequantizeModel, requantize } from './quant/dequantize.js';
export type { QuantRecord, QuantRecordEntry } from './quant/dequantize.js';
export { detectQuantized } from './quant/detect.js';
export type { QuantSite, SiteKind, Detected } from './quant/detect.js';

// Recovery: closed-form steps and distillation towards the original; sparse training.
export { proxPrune } from './recover/index.js';
// recover: a quantized student kept in its forms (job/recover-model.ts), a float one recover/'s
export { recover } from './job/index.js';
export type { ModelRecoverReport } from './job/index.js';
export type { RecoverOptions, RecoverProgress, RecoverReport, RecoverState, RecoverPhase, StepReport, ProxPruneOptions, ProxProgress, ProxReport, ProxLayerReport } from './recover/index.js';
