// The one table of the CLI's options: each flag once, with its value, its help line, the commands
// that take it and the job option it sets (`job`: a JobError about that option names this flag).
// Help text and parsing are generated from it (args.js); a flag means one thing in every command.
import { JOB_DEFAULTS } from 'sparsekit-wasm/onnx';

/**
 * @typedef {{ flag: string, short?: string, value?: string, multiple?: boolean, help: string,
 *   commands: string[], job?: string[] }} CliOption
 */

const P = 'prune', I = 'inspect', S = 'sensitivity', R = 'recover';

/** @type {CliOption[]} */
export const OPTIONS = [
  { flag: 'output', short: 'o', value: 'OUT.onnx', commands: [P, R], help: 'where to write the model (external data to OUT.onnx.data); written last, through a temporary file: a failed run leaves none. prune: for a transformers.js folder input, -o DIR/ (a trailing slash, or an empty existing folder) writes a folder of the same layout that pipeline() loads: the other files copied, the model as onnx/model<suffix>.onnx of its dtype (q8: model_quantized.onnx), config.json naming that dtype. A folder input reads onnx/model.onnx (or its only model*.onnx); another variant is given by its path (FOLDER/onnx/model_quantized.onnx)', job: ['output.layout'] },
  { flag: 'sparsity', value: 'S', commands: [P, S], job: ['mode.sparsity'], help: 'zero the fraction S in [0, 1] of the smallest-magnitude blocks; "auto" (or "query:auto") with --min-fidelity; sensitivity: levels L1,L2,…' },
  { flag: 'nm', value: 'N:M', commands: [P, S], job: ['mode.nm'], help: 'keep N of every M weights along the reduction axis (e.g. 2:4); layers whose axis is not a multiple of M stay dense (said per layer)' },
  { flag: 'channels', value: 'F', commands: [P, S], job: ['mode.fraction', 'mode.count'], help: 'remove the fraction F in [0, 1) of output channels along dependency groups (smaller and faster, not just sparser; with --method, an encoder\'s attention heads go where their measured influence on the outputs is least, over all its layers); "query:F": as F, but grouped-query attention (Llama, SmolLM2, Qwen) loses query heads within each KV group, the same count from each, its K/V heads and cache kept whole (F alone removes whole KV groups with their query heads); "auto" with --min-fidelity; "layers:K" removes the K residual blocks (decoder layers) of least influence on --calib, 1 − cos(hidden in, hidden out), as ShortGPT, and "layers:auto" with --min-fidelity as many as the floor allows; sensitivity: levels' },
  { flag: 'block', value: 'RxC', commands: [P], job: ['mode.block'], help: `block shape on the (outputs x inputs) view (default ${JOB_DEFAULTS.block.join('x')}; --prox ${JOB_DEFAULTS.proxBlock.join('x')})` },
  { flag: 'round-to', value: 'N', commands: [P, S], job: ['mode.roundTo'], help: `--channels: each layer keeps a multiple of N features (default ${JOB_DEFAULTS.roundTo}; 1 = exact; an attention head counts its width)` },
  { flag: 'scope', value: 'row|layer|global|owl', commands: [P], job: ['mode.scope', 'mode.allocation'], help: `where blocks / channels compete (default ${JOB_DEFAULTS.scope}; row: --sparsity only; global --channels F: F of the groups' parameters, least score per parameter first; owl: --sparsity per layer from each layer's outlier weights on --calib, as OWL allocates it)` },
  { flag: 'method', value: 'magnitude|wanda|sparsegpt', commands: [P, S], job: ['method'], help: `scoring (default ${JOB_DEFAULTS.method}); wanda (|W|·‖x‖) and sparsegpt (weights compensated) run --calib through the model with onnxruntime-node; layers they cannot serve fall back, said per layer` },
  { flag: 'recipe', value: 'R.json', commands: [P], job: ['mode.recipe'], help: 'per-layer settings (by name, glob or /regex/), or a prune --report holding a searched plan' },
  { flag: 'min-fidelity', value: 'F', commands: [P], job: ['mode.minFidelity'], help: 'search per-layer settings (--sparsity auto | --nm N:M | --channels auto) that keep the held-out fidelity >= F on every --eval sample' },
  { flag: 'levels', value: 'L1,L2,…', commands: [P], job: ['mode.levels'], help: 'the search\'s candidate levels per layer' },
  { flag: 'objective', value: 'params|flops|latency|bytes', commands: [P], job: ['mode.objective'], help: `what the search minimises (default ${JOB_DEFAULTS.objective}; latency: --channels only; bytes: the compressed download, each layer's saving estimated by compressing it; with --quantize, each layer also chooses its bits)` },
  { flag: 'confidence', value: 'P', commands: [P], job: ['mode.confidence'], help: 'hold the floor to the lower bound of each output\'s fidelity at confidence P (e.g. 0.95); a floor the samples cannot show is refused at once' },
  { flag: 'table-samples', value: 'N', commands: [P], job: ['mode.tableSamples'], help: 'the search\'s sensitivity table on the first N --eval samples only (every plan is still verified on all)' },
  { flag: 'prox', commands: [P], help: 'reach --sparsity of --block blocks by sparse training (proximal steps during distillation towards the input, the exact cut, then 2 epochs of recovery)' },
  { flag: 'recover', commands: [P], job: ['recover'], help: 'then recover the pruned model towards the input by distillation on --calib, judged on --eval' },
  { flag: 'quantize', value: 'int8|int4[,embeddings=E]', commands: [P], job: ['quantize.scheme', 'quantize.embeddings'], help: 'then quantize the weights: int8 per output channel (MatMulInteger for MatMul, DequantizeLinear elsewhere), int4 in blocks along the reduction axis (a language model: MatMulNBits; other models: the 4-bit blocks widened to the int8 MatMulInteger graph when onnxruntime loads the file, for WASM speed; embeddings 4-bit per row); with --calib each layer\'s rounding is compensated (GPTQ; jointly with --method sparsegpt), else rounded to nearest; pruned zeros stay zero. ,embeddings=int8|int4|int3|float sets the embedding tables\' own bits (int3: 8 levels in int4\'s blocks, about a quarter fewer bytes served than int4 tables; default: the scheme\'s). A quantized input is pruned and written again in its own scheme' },
  { flag: 'group', value: 'G', commands: [P], job: ['quantize.group'], help: 'int4 block size along the reduction axis (default 32)' },
  { flag: 'teacher', value: 'ORIG.onnx', commands: [R], help: 'the original (unpruned) model' },
  { flag: 'calib', value: 'DIR|TEXT|synthetic', commands: [P, S, R], job: ['calibration.samples'], help: 'calibration / training samples (default synthetic: generated from the graph); DIR: <sample>.npy|.png files or one folder per sample with <input>.npy; TEXT: a .txt / .jsonl file for a text model (see --tokenizer)' },
  { flag: 'calib-count', value: 'N', commands: [P, S, R], help: `samples generated, or the first N of DIR / TEXT (default ${JOB_DEFAULTS.calibrationCount}; training: 64, inputs of at most ${JOB_DEFAULTS.maxTrainingBytes / 2 ** 20} MiB; when the run trains, the pruning's statistics read the first ${JOB_DEFAULTS.trainingStatsLimit} and training reads all N)` },
  { flag: 'eval', value: 'DIR|TEXT|synthetic', commands: [P, S, R], job: ['eval.samples'], help: `held-out samples (no sample in common with --calib): the result's fidelity to the original per output, no labels needed (synthetic: ${JOB_DEFAULTS.generatedEvalCount} generated)` },
  { flag: 'tokenizer', value: 'tokenizer.json', commands: [P, S, R], help: 'text models: --calib / --eval may be .txt or .jsonl ("text" field) files, tokenized with this (default: tokenizer.json beside the model); a decoder reads windows of --seq-len tokens, an encoder one padded line per sample' },
  { flag: 'seq-len', value: 'N', commands: [P, S, R], help: 'tokens per text sample (default 256, or the model\'s max_position_embeddings from its config.json when smaller)' },
  { flag: 'eval-count', value: 'N', commands: [P, S, R], help: 'the first N of the --eval samples (default: all of them)' },
  { flag: 'metric', value: 'OUTPUT=KIND', multiple: true, commands: [P, R], help: 'how to read an output (repeatable): classification, detection, dense-map, sequence, language-model, embedding or generic (default: detected)' },
  { flag: 'epochs', value: 'N', commands: [P, R], job: ['recover.epochs', 'mode.epochs'], help: `training epochs: --recover / recover (default ${JOB_DEFAULTS.epochs}), --prox's proximal phase` },
  { flag: 'minutes', value: 'M', commands: [P, R], job: ['recover.minutes', 'mode.minutes'], help: 'a time budget for that training (the first of --epochs and --minutes reached stops it)' },
  { flag: 'lr', value: 'LR|cosine:LR', commands: [P, R], job: ['recover.lr', 'training.lr'], help: `Adam's learning rate (default ${JOB_DEFAULTS.lr}, ${JOB_DEFAULTS.schedule} over the run); cosine:LR: a warm-up to LR over the first 5% of the run, then a half cosine down to a tenth of it` },
  { flag: 'batch', value: 'B', commands: [P, R], job: ['recover.batchSize', 'training.batchSize'], help: `samples per step (default ${JOB_DEFAULTS.batchSize})` },
  { flag: 'features', value: 'N|A,B', commands: [P, R], job: ['recover.features', 'training.features'], help: 'also distill N matched block outputs of the student (evenly spaced cut points), or these tensors' },
  { flag: 'checkpoint', value: 'CKPT', commands: [R], help: 'save the training state after every epoch (atomically); when CKPT exists, continue from it' },
  { flag: 'report', value: 'R.json', commands: [P, I, S, R], help: 'write the report as JSON (inspect: - prints it on stdout)' },
  { flag: 'quiet', short: 'q', commands: [P, S, R], help: 'no progress lines' },
  { flag: 'help', short: 'h', commands: [P, I, S, R], help: 'this help' },
];

/**
 * The flag that sets a job option (a JobError's `option`), for messages in the CLI's words.
 * @param {string} option
 */
export function flagOf(option) {
  const o = OPTIONS.find((x) => x.job?.some((j) => option === j || option.startsWith(`${j}.`)));
  return o ? `--${o.flag}` : undefined;
}
