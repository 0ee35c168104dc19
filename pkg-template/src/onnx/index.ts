// sparsekit-wasm/onnx: read, inspect, prune and write ONNX models (browsers and Node).
export { OnnxModel, MemoryExternalSource, ModelProto, DT, dtypeName, transpose } from './model.js';
export type { OnnxWeight, WeightView, ParseOptions, ExternalSource, SpillStore, ValueInfo, TensorProto } from './model.js';
export { OnnxError } from './errors.js';
export type { OnnxReason } from './errors.js';
export { halfToFloat, floatToHalf, halfArrayToFloat, floatArrayToHalf, bf16ArrayToFloat, floatArrayToBf16 } from './fp16.js';
/** The ONNX schema text (protobufjs), for tools that decode / re-encode models themselves. */
export { ONNX_PROTO } from './schema.js';
export { pruneSparsity, pruneNm, parseNm } from './prune.js';
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
export { runSet, compareSets, outputAsFloat, evaluate } from './calib/evaluate.js';
export type { Outputs, OutputArray, SetComparison, EvaluateOptions, EvaluateReport } from './calib/evaluate.js';
// Label-free fidelity per output (classification, detection, dense maps, sequences, generic).
export { fidelity, detectKind, OUTPUT_KINDS, lowerBound, wilsonLower } from './fidelity/index.js';
export type { OutputKind, OutputFidelity, FidelityReport, FidelityOptions, DetectionOptions, DenseMapOptions, BoundedFidelity } from './fidelity/index.js';
export { CancelledError } from './calib/cancel.js';
export { removeChannelsCalibrated } from './calib/calibrated-channels.js';
export type { CalibratedChannelOptions, ConsumerReport } from './calib/calibrated-channels.js';
import type { CalibrationDirOptions } from './calib/samples-dir.js';
export type { CalibrationDirOptions };
import type { InputSample } from './calib/inputs.js';
import { OnnxModel, type ParseOptions } from './model.js';
import { OnnxError } from './errors.js';

/**
 * The Node file helpers, loaded only when a path is used. The specifier is computed so that
 * bundlers (Vite, webpack, esbuild) do not pull node:fs into browser builds.
 */
function nodeIo(): Promise<typeof import('./node-io.js')> {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./node-io.js', import.meta.url).href);
}

const isNode = typeof process !== 'undefined' && !!(process as { versions?: { node?: string } }).versions?.node;

/**
 * Loads a model from bytes, or (Node only) from a path whose external data files sit next to it.
 */
export async function loadOnnx(src: string | Uint8Array | ArrayBuffer, opts: ParseOptions = {}): Promise<OnnxModel> {
  if (typeof src !== 'string') return OnnxModel.parse(src, opts);
  if (!isNode) throw new OnnxError('unsupported', 'loading a model from a path needs Node: pass the bytes in a browser', 'unsupported_environment');
  const io = await nodeIo();
  return io.loadOnnxFile(src);
}

/** Node only: writes the model (and its external data as `<file>.data`) via temporary files. */
export async function saveOnnx(model: OnnxModel, file: string) {
  if (!isNode) throw new OnnxError('unsupported', 'saving to a path needs Node: use model.encode() in a browser', 'unsupported_environment');
  const io = await nodeIo();
  return io.saveOnnxFile(model, file);
}

/**
 * Node only: calibration samples from a directory of `.npy` / `.png` files or one folder per sample
 * (layout in docs/onnx.md), checked against the model's inputs.
 */
export async function readCalibrationDir(dir: string, model: OnnxModel, opts: CalibrationDirOptions = {}): Promise<InputSample[]> {
  if (!isNode) throw new OnnxError('unsupported', 'reading calibration files from a directory needs Node: pass InputSample[] in a browser', 'unsupported_environment');
  const mod: typeof import('./calib/samples-dir.js') = await import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./calib/samples-dir.js', import.meta.url).href);
  return mod.readCalibrationDir(dir, model, opts);
}
// Recipes: per-layer settings as JSON (hand-written or saved by the search), parsed, matched, applied.
export { parseRecipe, parseSetting, compilePattern, recipeJson, settingJson } from './recipe/recipe.js';
export type { Recipe, RecipeRule, Setting, Pattern } from './recipe/recipe.js';
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
export { recover, fitLayers, matchChannels, trainSetup, proxPrune, rampTarget, cutPoints, matchFeatures, FeatureTeacher } from './recover/index.js';
export type { ProxOptions, ProxProgress, ProxReport, ProxLayerReport, Feature, TeacherBatching, FeatureTeacherOptions } from './recover/index.js';
export type { RecoverOptions, RecoverProgress, RecoverReport, RecoverState, RecoverPhase, StepReport, FitLayer, TrainSetup } from './recover/index.js';
// Text in (issue 37): text + tokenizer -> samples, decoder / encoder detection, the held-out check by
// samples, and the language fidelity kinds (language-model, embedding).
export { textSamples } from './text/text-samples.js';
export type { TextSampleOptions, TextSampleSet } from './text/text-samples.js';
export { loadTokenizer } from './text/tokenizer.js';
export type { TextTokenizer, TokenizerSource } from './text/tokenizer.js';
export { parseText, textFormatOf } from './text/text-source.js';
export type { TextFormat, TextRecords } from './text/text-source.js';
export { detectTextModel, textInputs, TEXT_INPUTS } from './text/model-kind.js';
export type { TextModelKind, TextInput } from './text/model-kind.js';
export { findSharedSample, checkDisjointSamples } from './calib/sample-overlap.js';
export { languageModelFidelity, embeddingFidelity, pooledRows, tokenRows, NEIGHBOURS } from './fidelity/index.js';
export type { TokenRows, SampleInputs, TextContext } from './fidelity/index.js';
import type { TextModelFiles, TextFileOptions } from './text/text-files.js';
import type { TextSampleSet as TextSet } from './text/text-samples.js';
export type { TextModelFiles, TextFileOptions };
const textFiles = (): Promise<typeof import('./text/text-files.js')> =>
  import(/* @vite-ignore */ /* webpackIgnore: true */ new URL('./text/text-files.js', import.meta.url).href);
/** Node only: a `.onnx` path or a transformers.js model folder (config.json, tokenizer.json, onnx/model.onnx) as its files. */
export async function resolveTextModel(src: string): Promise<TextModelFiles> {
  if (!isNode) throw new OnnxError('unsupported', 'resolving a model folder needs Node', 'unsupported_environment');
  return (await textFiles()).resolveTextModel(src);
}
/** Node only: samples of a `.txt` / `.jsonl` file for a text model (see textSamples); the tokenizer may be a tokenizer.json path. */
export async function readTextSamples(file: string, opts: TextFileOptions): Promise<TextSet> {
  if (!isNode) throw new OnnxError('unsupported', 'reading a text file needs Node: pass the text to textSamples in a browser', 'unsupported_environment');
  return (await textFiles()).readTextSamples(file, opts);
}
