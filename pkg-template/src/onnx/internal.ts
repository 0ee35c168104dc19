// Every name of the ONNX module, for the repository's own tests and benches: not a package entry
// (package.json exports only index.js, the curated public API). Read, inspect, prune and write ONNX
// models (browsers and Node).
export { OnnxModel, MemoryExternalSource, ModelProto, DT, dtypeName, transpose } from './model.js';
export type { OnnxWeight, WeightView, ParseOptions, ExternalSource, SpillStore, ValueInfo, TensorProto, ExternalState, StoredState, RawState } from './model.js';
export { OnnxError } from './errors.js';
export type { OnnxReason } from './errors.js';
export { halfToFloat, floatToHalf, halfArrayToFloat, floatArrayToHalf, bf16ArrayToFloat, floatArrayToBf16 } from './fp16.js';
/** The ONNX schema text (protobufjs), for tools that decode / re-encode models themselves. */
export { ONNX_PROTO } from './schema.js';
export { pruneSparsity, pruneNm } from './prune.js';
export type { PruneOptions, PruneReport, LayerReport, Scope, ProgressFn } from './prune.js';
export { findChannelGroups, removeChannels, planChannels } from './channels.js';
export type { ChannelGroup, ChannelOptions, ChannelAnalysis, GroupMember } from './channels.js';
// Calibration-aware pruning of whole models (Wanda / SparseGPT per layer, sequential capture with the
// caller's onnxruntime), and the calibration inputs: generated, or read from files.
export { calibratePrune } from './calib/calibrate.js';
export type { CalibrateOptions, CalibReport, CalibLayerReport, CalibProgress, CalibTime } from './calib/calibrate.js';
export { CALIB_DEFAULTS } from './calib/defaults.js';
export { Sweep, capture } from './calib/sweep.js';
export type { SweepStats, CaptureOptions } from './calib/sweep.js';
export type { CutStore } from './calib/cut-store.js';
export { findLayers, captureGroups } from './calib/layers.js';
export type { CalibLayer, StatsKind } from './calib/layers.js';
export { pruneLayer, viewValues, maskFromScores, allowsNm, MIN_VECTORS_PER_INPUT } from './calib/layer-prune.js';
export type { Criterion, MethodUsed, Target, LayerStats, LayerPruneResult } from './calib/layer-prune.js';
export { makeInputSet, genericTensor, resolveInputShape, checkGeneratedShape, MAX_GENERATED_ELEMENTS, isImageShape, isDensePrediction, pngShape, MAX_PNG_SIDE, ORT_TYPES, SEED_BASE } from './calib/inputs.js';
export type { FeedTensor, InputSample, InputSetOptions } from './calib/inputs.js';
export { renderPage, documentTensor, toTensor, NORMALIZATIONS, PAGE_LAYOUTS } from './calib/doc-pages.js';
export type { RenderedPage, RgbaImage, Normalization } from './calib/doc-pages.js';
export { prng } from './calib/prng.js';
export { parseNpy, npyToFeed } from './calib/npy.js';
export type { NpyArray } from './calib/npy.js';
export { decodePng, resizeRgba } from './calib/png.js';
export { makeOrtRunner } from './calib/ort-runner.js';
export type { OrtLike, ModelRunner, RunnerSession, RunOutput } from './calib/ort-runner.js';
export { runSet, compareSets, outputAsFloat, evaluate, heldOut } from './calib/evaluate.js';
export { openSession, SESSION_FILE_MIN_BYTES } from './calib/model-session.js';
export type { Outputs, OutputArray, SetComparison, EvaluateOptions, EvaluateReport, HeldOut } from './calib/evaluate.js';
// Label-free fidelity per output (classification, detection, dense maps, sequences, generic).
export { fidelity, detectKind, OUTPUT_KINDS, lowerBound, wilsonLower } from './fidelity/index.js';
export type { OutputKind, OutputFidelity, FidelityReport, FidelityOptions, DetectionOptions, DenseMapOptions, BoundedFidelity } from './fidelity/index.js';
export { CancelledError, turn } from './calib/cancel.js';
export { removeChannelsCalibrated } from './calib/calibrated-channels.js';
export { headInfluence, influenceSamples, type HeadUnit } from './calib/head-influence.js';
export { findResidualBlocks, removeResidualBlocks, type ResidualBlock } from './residual-blocks.js';
export { blockInfluence, leastInfluential, type BlockInfluence } from './calib/block-influence.js';
export type { CalibratedChannelOptions, ConsumerReport, HeadGroupReport } from './calib/calibrated-channels.js';
export type { CalibrationDirOptions } from './calib/samples-dir.js';
export { loadOnnx, saveOnnx, fileCutStore, readCalibrationDir, readTextSamples, resolveTextModel, saveTransformersFolder } from './files.js';
export type { TextModelFiles, TextFileOptions, ResolveOptions } from './text/text-files.js';
export { tjsLayout, tjsConfig, tjsFile, transformersDtype, dtypeOfFile, pickVariant, TJS_SUFFIX, TJS_DTYPES } from './text/tjs-layout.js';
export type { TjsOutput, TjsDtype } from './text/tjs-layout.js';
export type { SavedFolder } from './text/tjs-folder.js';
// Recipes: per-layer settings as JSON (hand-written or saved by the search), parsed, matched, applied.
export { parseRecipe, parseSetting, compilePattern, recipeJson, settingJson, settingLabel } from './recipe/recipe.js';
export type { Recipe, RecipeRule, Setting, SettingScope, Pattern } from './recipe/recipe.js';
export { resolveRecipe, layerUnits, groupUnits } from './recipe/match.js';
export type { RecipeUnit, Resolved } from './recipe/match.js';
export { applyRecipe, planRecipe } from './recipe/apply.js';
export type { ApplyRecipeOptions, RecipeReport } from './recipe/apply.js';
// Sensitivity per layer / channel group, and compression to a fidelity floor (plans written as recipes).
export { sensitivity, checkLevels, DEFAULT_LEVELS } from './search/sensitivity.js';
export type { SensitivityOptions, SensitivityResult, SensitivityUnit, SensitivityCell, SearchMode } from './search/sensitivity.js';
export { allocate } from './search/allocate.js';
export type { Allocation, Objective } from './search/allocate.js';
export { compress } from './search/compress.js';
export type { CompressOptions, CompressResult, PlanStep } from './search/compress.js';
export { LatencyProbe } from './search/latency.js';
export { trainGraph, type TrainGraphOptions } from './train/graph.js';
// Recovery after pruning: statistics correction, least-squares refit, distillation (recover/).
export { fitLayers, matchChannels, trainSetup, teacherTargets, lossesOf, withFeatures, maskPadding, paddingTrim, trimProbe, batchLength, trimBatch, trimSamples, trimmedLosses, epochBatches, makeBatch, lrSchedule, lrAt, runShare, proxPrune, rampTarget, cutPoints, matchFeatures, FeatureTeacher } from './recover/index.js';
export type { ProxPruneOptions, ProxProgress, ProxReport, ProxLayerReport, Feature, TeacherBatching, FeatureTeacherOptions, LrSchedule, PaddingTrim } from './recover/index.js';
export type { RecoverOptions, RecoverProgress, RecoverReport, RecoverState, RecoverPhase, StepReport, FitLayer, TrainSetup } from './recover/index.js';
export { recover } from './job/index.js';
export type { ModelRecoverReport } from './job/index.js';
// The job: one typed pruning run (mode, method, samples, floor, recovery) that the CLI, callers and
// the playground all build and run (job/).
export { runJob, checkJob, parseNm, JobError, FloorError, JOB_DEFAULTS } from './job/index.js';
export type { PruneJob, JobMode, JobMethod, JobTraining, JobEnv, JobProgress, JobResult, JobReport, JobPruneReport, JobFidelity } from './job/index.js';
// Quantization of one layer: GPTQ through the layer's Hessian (jointly with pruning), or
// round-to-nearest without statistics; codes and scales per row and group for the ONNX writers.
export { quantizeLayer } from './calib/layer-quantize.js';
export type { LayerQuantizeOptions, LayerQuantizeResult, QuantMethod } from './calib/layer-quantize.js';
// A pruned model quantized as the job writes it (GPTQ through the calibration samples, or round to nearest).
export { quantizePass } from './calib/quantize-pass.js';
export type { GptqPassOptions, QuantizePassResult } from './calib/quantize-pass.js';
// Quantization (quant/): int8 / int4 (MatMulNBits) weights written in the forms onnxruntime serves,
// quantized models read back to float (dequantizeModel) and written again in their scheme (requantize).
export { quantizeModel, plannedGrids } from './quant/quantize.js';
export type { QuantizeOptions, QuantReport, QuantLayerReport, QuantScheme, GivenCodes } from './quant/quantize.js';
export { dequantizeModel, requantize } from './quant/dequantize.js';
export type { QuantRecord, QuantRecordEntry } from './quant/dequantize.js';
export { detectQuantized } from './quant/detect.js';
export type { QuantSite, SiteKind, Detected } from './quant/detect.js';
export { rtnQuantize, dequantizeView, qmax, positiveScales } from './quant/grid.js';
export type { Quantizer, QuantGrid, QuantizedView } from './quant/grid.js';
export { packNBits, unpackNBits } from './quant/pack4.js';
export { QUANT_FORMS, INT8_MATMUL_FORM } from './quant/forms.js';
export type { QuantForm, Int8MatMulForm, Int4MatMulForm } from './quant/forms.js';
export { widenInt4 } from './quant/int4-dynamic.js';
export { halfScales } from './quant/half-scales.js';
// Transport sizes estimated at a fraction of brotli 11's cost, Hessians shared by the layers that read
// one input.
export { transportSize } from './files.js';
export type { TransportSizeOptions, TransportSize } from './transport-size.js';
export { RATIO_FIT as TRANSPORT_RATIO_FIT } from './transport-fit.js';
export { servedSplit, servedBytes, byteSizer } from './served-bytes.js';
export { SharedStats, statsKey } from './calib/shared-stats.js';
export type { SharingStats } from './calib/shared-stats.js';
// Integer inputs bounded by their consumers (Gather tables, masks), and failures inside onnxruntime or
// the training core as one typed line naming the node.
export { integerInputRanges, type IntRange } from './calib/input-ranges.js';
export { runFailure, guardRun, guardSync, type RunEngine } from './run-failure.js';
// Text in: text + tokenizer -> samples, decoder / encoder detection, the held-out check by samples, and
// the language fidelity kinds (language-model, embedding).
export { textSamples } from './text/text-samples.js';
export type { TextSampleOptions, TextSampleSet } from './text/text-samples.js';
export { loadTokenizer } from './text/tokenizer.js';
export type { TextTokenizer, TokenizerSource } from './text/tokenizer.js';
export { unreachableTokens, zeroUnreachableRows } from './text/unreachable-tokens.js';
export type { UnreachableTokens, UnreachableRowsReport } from './text/unreachable-tokens.js';
export { parseText, textFormatOf } from './text/text-source.js';
export type { TextFormat, TextRecords } from './text/text-source.js';
export { detectTextModel, textInputs, TEXT_INPUTS } from './text/model-kind.js';
export type { TextModelKind, TextInput } from './text/model-kind.js';
export { findSharedSample, checkDisjointSamples } from './calib/sample-overlap.js';
export { languageModelFidelity, embeddingFidelity, pooledRows, tokenRows, NEIGHBOURS } from './fidelity/index.js';
export type { TokenRows, SampleInputs, TextContext } from './fidelity/index.js';
export { owlSparsities, OWL_DEFAULTS } from './calib/owl.js';
