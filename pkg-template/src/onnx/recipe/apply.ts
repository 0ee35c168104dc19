// Applying a recipe to a model, in place: weights mode goes through pruneSparsity / pruneNm
// (magnitude) or calibratePrune (wanda / sparsegpt) with a per-layer target; channels mode removes
// each group's fraction, one call per distinct fraction (in increasing order, so the same recipe
// always gives the same model) with the groups of that fraction selected by their producers.
import type { OnnxModel } from '../model.js';
import { layerReport, pruneNm, pruneSparsity, type LayerReport, type PruneReport } from '../prune.js';
import { findChannelGroups, removeChannels } from '../channels.js';
import { calibratePrune, type CalibProgress } from '../calib/calibrate.js';
import { removeChannelsCalibrated, type CalibratedChannelOptions } from '../calib/calibrated-channels.js';
import type { ModelRunner, OrtLike } from '../calib/ort-runner.js';
import type { InputSample } from '../calib/inputs.js';
import { groupUnits, layerUnits, resolveRecipe, type Resolved } from './match.js';
import { parseRecipe, recipeError, settingLabel, type Recipe, type Setting } from './recipe.js';

export interface ApplyRecipeOptions {
  /** Overrides the recipe's method (default magnitude). */
  method?: 'magnitude' | 'wanda' | 'sparsegpt';
  /** For wanda / sparsegpt: onnxruntime and the calibration samples. */
  ort?: OrtLike | ModelRunner;
  sessionOptions?: object;
  calibration?: InputSample[];
  percDamp?: number;
  /** Channels with wanda / sparsegpt: how the calibrated removal scores and refits (as the channels job mode sets them). */
  channels?: Pick<CalibratedChannelOptions, 'score' | 'refit' | 'centre'>;
  /** Sequential calibration (default true), as calibratePrune. */
  sequential?: boolean;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, label: string) => void;
  onCalibProgress?: (p: CalibProgress) => void;
}

export interface RecipeReport extends PruneReport {
  recipe: { mode: Recipe['mode']; method: string; settings: Record<string, unknown>; source: Record<string, string> };
  /** onnxruntime sessions created for calibration (0 for magnitude; null: calibrated channel removal does not count them). */
  passes: number | null;
}

/** Whether a sparsity setting asks for more than 1x1 blocks ranked per layer (magnitude's block and scope). */
const blockwise = (s: Setting) => s.kind === 'sparsity' && ((s.block !== undefined && (s.block[0] !== 1 || s.block[1] !== 1)) || (s.scope !== undefined && s.scope !== 'layer'));

/**
 * The sparsity settings in pruneSparsity calls of one block and one scope each: the key of a call,
 * its options, and which layers it prunes. A 'global' pool is one sparsity and block; calls run in
 * key order, so the same recipe always prunes the same way (each layer is pruned by exactly one call).
 */
function sparsityCalls(set: Map<string, Setting>): { key: string; block: [number, number]; scope: 'layer' | 'row' | 'global'; sparsity?: number; names: Set<string> }[] {
  const calls = new Map<string, { key: string; block: [number, number]; scope: 'layer' | 'row' | 'global'; sparsity?: number; names: Set<string> }>();
  for (const [name, s] of set) {
    if (s.kind !== 'sparsity') continue;
    const block = s.block ?? [1, 1], scope = s.scope ?? 'layer';
    const key = `${scope} ${block[0]}x${block[1]}${scope === 'global' ? ` ${s.sparsity}` : ''}`;
    const c = calls.get(key) ?? calls.set(key, { key, block, scope, sparsity: scope === 'global' ? s.sparsity : undefined, names: new Set() }).get(key)!;
    c.names.add(name);
  }
  return [...calls.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Resolves the recipe against the model without changing it (throws on a pattern that matches nothing). */
export function planRecipe(model: OnnxModel, recipe: Recipe | string | object): { recipe: Recipe; resolved: Resolved } {
  const r = isRecipe(recipe) ? recipe : parseRecipe(recipe as string | object);
  const units = r.mode === 'channels' ? groupUnits(model, findChannelGroups(model, r.heads).groups) : layerUnits(model);
  return { recipe: r, resolved: resolveRecipe(r, units) };
}

function isRecipe(x: unknown): x is Recipe {
  return !!x && typeof x === 'object' && 'rules' in x && 'mode' in x && Array.isArray((x as Recipe).rules);
}

/** Applies a recipe (a parsed Recipe, its JSON text or object) to `model`, in place. */
export async function applyRecipe(model: OnnxModel, recipe: Recipe | string | object, opts: ApplyRecipeOptions = {}): Promise<RecipeReport> {
  const { recipe: r, resolved } = planRecipe(model, recipe);
  const method = opts.method ?? r.method ?? 'magnitude';
  if (method !== 'magnitude' && (!opts.ort || !opts.calibration?.length)) {
    throw recipeError(`method ${method} needs onnxruntime and calibration samples`, 'invalid_arguments');
  }
  const blocked = [...resolved.settings].find(([, s]) => blockwise(s));
  if (method !== 'magnitude' && blocked) {
    throw recipeError(`${blocked[0]}: block and scope apply to method magnitude (wanda prunes per output row, sparsegpt per block of columns)`, 'invalid_arguments');
  }
  const info = {
    mode: r.mode, method,
    settings: Object.fromEntries([...resolved.settings].map(([k, s]) => [k, settingLabel(s)])),
    source: Object.fromEntries(resolved.source),
  };
  const report = r.mode === 'channels' ? await applyChannels(model, r, resolved, method, opts) : await applyWeights(model, resolved, method, opts);
  return { ...report, recipe: info };
}

async function applyWeights(model: OnnxModel, resolved: Resolved, method: string, opts: ApplyRecipeOptions): Promise<Omit<RecipeReport, 'recipe'>> {
  const set = resolved.settings;
  if (method !== 'magnitude') {
    const rep = await calibratePrune(model, {
      ort: opts.ort!, sessionOptions: opts.sessionOptions, calibration: opts.calibration!, percDamp: opts.percDamp,
      sequential: opts.sequential, signal: opts.signal, onProgress: opts.onCalibProgress,
      criterion: (l) => (set.get(l.name)?.kind ?? 'dense') === 'dense' ? 'dense' : (method as 'wanda' | 'sparsegpt'),
      layerTarget: (l) => {
        const s = set.get(l.name);
        return s?.kind === 'nm' ? { nm: s.nm } : s?.kind === 'sparsity' ? { sparsity: s.sparsity } : undefined;
      },
    });
    return { ...rep, passes: rep.passes };
  }
  const shapes = new Map(model.prunable().map((w) => [w.name, w.dims.slice()]));
  const before = model.weights.reduce((a, w) => a + w.numel, 0);
  const prunableBefore = model.prunable().reduce((a, w) => a + w.numel, 0);
  const kinds = new Set([...set.values()].map((s) => s.kind));
  const notes = new Map<string, string | undefined>();
  const keepNotes = (rep: PruneReport, kind: string) => {
    for (const l of rep.layers) if (set.get(l.name)?.kind === kind) notes.set(l.name, l.note);
  };
  for (const c of sparsityCalls(set)) {
    const rep = c.scope === 'global'
      // one pool: the layers of this setting take the common sparsity (undefined), the others stay out (null)
      ? pruneSparsity(model, { sparsity: c.sparsity, block: c.block, scope: 'global', layerTarget: (w) => (c.names.has(w.name) ? undefined : null) })
      : pruneSparsity(model, { block: c.block, scope: c.scope, layerTarget: (w) => { const s = set.get(w.name); return c.names.has(w.name) && s?.kind === 'sparsity' ? s.sparsity : null; } });
    for (const l of rep.layers) if (c.names.has(l.name)) notes.set(l.name, l.note);
  }
  if (kinds.has('nm')) {
    keepNotes(pruneNm(model, { layerTarget: (w) => { const s = set.get(w.name); return s?.kind === 'nm' ? s.nm : null; } }), 'nm');
  }
  const ws = model.prunable();
  const layers: LayerReport[] = ws.map((w) => layerReport(model, w, shapes.get(w.name) ?? w.dims.slice(),
    set.get(w.name)?.kind === 'dense' ? 'dense: by the recipe' : notes.get(w.name)));
  const prunableAfter = layers.reduce((a, l) => a + l.params, 0);
  const zeros = layers.reduce((a, l) => a + l.zeros, 0);
  return {
    mode: kinds.has('nm') && !kinds.has('sparsity') ? 'nm' : 'sparsity', options: { recipe: true },
    params: { before, after: model.weights.reduce((a, w) => a + w.numel, 0), prunableBefore, prunableAfter },
    zeros, sparsity: prunableAfter ? zeros / prunableAfter : 0, layers, passes: 0,
  };
}

async function applyChannels(model: OnnxModel, r: Recipe, resolved: Resolved, method: string, opts: ApplyRecipeOptions): Promise<Omit<RecipeReport, 'recipe'>> {
  const byFraction = new Map<number, Set<string>>();
  for (const [name, s] of resolved.settings) {
    if (s.kind !== 'channels' || s.channels === 0) continue;
    (byFraction.get(s.channels) ?? byFraction.set(s.channels, new Set()).get(s.channels)!).add(name);
  }
  const shapes = new Map(model.prunable().map((w) => [w.name, w.dims.slice()]));
  const before = model.weights.reduce((a, w) => a + w.numel, 0);
  const prunableBefore = model.prunable().reduce((a, w) => a + w.numel, 0);
  const removed: object[] = [];
  let score: string | undefined;
  const fractions = [...byFraction.keys()].sort((a, b) => a - b);
  for (const [i, f] of fractions.entries()) {
    const names = byFraction.get(f)!;
    const filter = (g: { producers: string[] }) => names.has(g.producers[0]);
    opts.onProgress?.(i, fractions.length, `channels ${f}`);
    const rep = method === 'magnitude'
      ? removeChannels(model, { fraction: f, scope: 'layer', roundTo: r.roundTo, heads: r.heads, filter })
      : await removeChannelsCalibrated(model, {
        ort: opts.ort!, sessionOptions: opts.sessionOptions, calibration: opts.calibration!, method: method as 'wanda' | 'sparsegpt',
        ...opts.channels, fraction: f, scope: 'layer', roundTo: r.roundTo, heads: r.heads, filter, percDamp: opts.percDamp, signal: opts.signal, onCalibProgress: opts.onCalibProgress,
      });
    removed.push(...rep.groups.removed);
    score ??= (rep.options as { score?: string }).score;
  }
  opts.onProgress?.(fractions.length, fractions.length, 'channels');
  const layers = model.prunable().map((w) => layerReport(model, w, shapes.get(w.name) ?? w.dims.slice()));
  const prunableAfter = layers.reduce((a, l) => a + l.params, 0);
  const zeros = layers.reduce((a, l) => a + l.zeros, 0);
  const kept = findChannelGroups(model, r.heads).groups.filter((g) => !g.prunable).map((g) => ({ id: g.id, producers: g.producers, channels: g.channels, reason: g.reason }));
  return {
    mode: 'channels', options: { recipe: true, roundTo: r.roundTo ?? 8, ...(r.heads ? { heads: r.heads } : {}), ...(score ? { score } : {}) },
    params: { before, after: model.weights.reduce((a, w) => a + w.numel, 0), prunableBefore, prunableAfter },
    zeros, sparsity: prunableAfter ? zeros / prunableAfter : 0, layers, passes: method === 'magnitude' ? 0 : null,
    groups: { removed, kept },
  } as Omit<RecipeReport, 'recipe'>;
}
