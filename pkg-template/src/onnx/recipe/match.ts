// Which setting of a recipe each unit gets: a layer (its weight name, or its node's name) in weights
// mode, a channel group (any of its producers' names) in channels mode. Order: the ignore list, then an
// exact name, then the patterns in file order (the first that matches), then the default. Every name
// and pattern of the recipe must match something in the model: a recipe for another model, or with a
// typo, is refused rather than silently applied to nothing.
// Embedding tables (a Gather's data) are units of weights mode too, for their `quantize` only: they
// are not pruned, so a pattern or the default that prunes gives a table just its bits, and a table
// named exactly with a pruning setting is refused.
import type { OnnxModel } from '../model.js';
import { findChannelGroups, type ChannelGroup } from '../channels.js';
import { findTargets } from '../quant/targets.js';
import { recipeError, type Pattern, type QuantChoice, type Recipe, type Setting } from './recipe.js';

/** A prunable unit as a recipe names it. */
export interface RecipeUnit {
  /** The key the search writes: the weight name, or the group's first producer. */
  name: string;
  /** Every name a pattern may match. */
  aliases: string[];
  /** An embedding table: a unit for its quantization only. */
  table?: true;
}

export interface Resolved {
  /** Setting per unit name. */
  settings: Map<string, Setting>;
  /** Which entry of the recipe decided it ('ignore: …', 'layers: …', 'default'). */
  source: Map<string, string>;
}

/** The weights mode units: every prunable weight, then every embedding table the quantizer can write. */
export function layerUnits(model: OnnxModel): RecipeUnit[] {
  const layers: RecipeUnit[] = model.prunable().map((w) => ({ name: w.name, aliases: [w.name, ...(w.node ? [w.node] : [])] }));
  const names = new Set(layers.map((u) => u.name));
  const tables: RecipeUnit[] = findTargets(model).targets.filter((t) => t.role === 'embedding' && !names.has(t.w.name))
    .map((t) => ({ name: t.w.name, aliases: [t.w.name, ...(t.node.name ? [t.node.name] : [])], table: true }));
  return [...layers, ...tables];
}

/** A table's setting: its bits only (see the file comment). */
function tableSetting(s: Setting): Setting {
  return s.kind === 'channels' ? { kind: 'dense' } : s.quantize ? { kind: 'dense', quantize: s.quantize } : { kind: 'dense' };
}

/** The channels mode units: every channel group with a producer (prunable or kept whole). */
export function groupUnits(model: OnnxModel, groups: ChannelGroup[] = findChannelGroups(model).groups): RecipeUnit[] {
  return groups.filter((g) => g.producers.length).map((g) => ({ name: g.producers[0], aliases: g.producers.slice() }));
}

const hits = (p: Pattern, u: RecipeUnit) => u.aliases.some((a) => p.re.test(a));

/** Each unit's setting (see the file comment); throws recipe_no_match for a name or pattern that matches nothing. */
export function resolveRecipe(recipe: Recipe, units: RecipeUnit[]): Resolved {
  const what = recipe.mode === 'channels' ? 'channel group' : 'prunable layer';
  const unused = [...recipe.ignore, ...recipe.rules.map((r) => r.pattern)].filter((p) => !units.some((u) => hits(p, u)));
  if (unused.length) {
    const list = unused.slice(0, 3).map((p) => `"${p.source}"`).join(', ') + (unused.length > 3 ? ` (+${unused.length - 3} more)` : '');
    const sample = units.slice(0, 3).map((u) => u.name).join(', ');
    throw recipeError(`${list} match${unused.length === 1 ? 'es' : ''} no ${what} of this model (${units.length} ${what}s${sample ? `, e.g. ${sample}` : ''})`, 'recipe_no_match');
  }
  const exact = recipe.rules.filter((r) => r.pattern.kind === 'exact');
  const patterns = recipe.rules.filter((r) => r.pattern.kind !== 'exact');
  const settings = new Map<string, Setting>();
  const source = new Map<string, string>();
  for (const u of units) {
    const ig = recipe.ignore.find((p) => hits(p, u));
    if (ig) { settings.set(u.name, { kind: 'dense' }); source.set(u.name, `ignore: ${ig.source}`); continue; }
    const r = exact.find((x) => hits(x.pattern, u)) ?? patterns.find((x) => hits(x.pattern, u));
    const s = r ? r.setting : recipe.default;
    if (u.table && r?.pattern.kind === 'exact' && (s.kind === 'sparsity' || s.kind === 'nm')) {
      throw recipeError(`"${r.pattern.source}" is an embedding table: it is not pruned, its setting may only be {"quantize": …}`, 'invalid_recipe');
    }
    settings.set(u.name, u.table ? tableSetting(s) : s);
    source.set(u.name, r ? `layers: ${r.pattern.source}` : 'default');
  }
  return { settings, source };
}

/** The units whose setting names their bits (`quantize`), and those bits. */
export function resolvedBits(resolved: Resolved): Map<string, QuantChoice> {
  const out = new Map<string, QuantChoice>();
  for (const [name, s] of resolved.settings) if (s.kind !== 'channels' && s.quantize) out.set(name, s.quantize);
  return out;
}
