// A pruning recipe: per-layer settings as JSON, written by hand or by the search (`prune --min-fidelity
// … --save-recipe`), applied by `prune --recipe`. Parsed and validated here before anything touches a
// model, so a typo is one clear error and never a half-pruned file.
//
// {
//   "sparsekit": "recipe/1",                 optional tag
//   "method": "magnitude" | "wanda" | "sparsegpt",   optional (the CLI's --method wins when given)
//   "default": {"sparsity": 0.5} | {"nm": "2:4"} | {"channels": 0.3} | "dense",   optional (dense)
//              a sparsity may add "block": "4x4" and "scope": "layer" | "row" | "global" (magnitude only);
//              a sparsity, nm or dense setting may add "quantize": "int8" | "int4" | "float" (the layer's
//              own bits when the job quantizes: {"quantize": "int8"} alone is dense + int8)
//   "layers": {"<name | glob | /regex/>": <setting>, …},                               optional
//   "ignore": ["<name | glob | /regex/>", …],                                            optional
//   "roundTo": 8,                             channels only: kept count rounded to a multiple of this
//   "heads": "groups" | "query",              channels only: grouped-query attention's unit (whole KV
//                                             groups, the default, or query heads within them)
//   "meta": { … }                             free-form (the search writes its figures there)
// }
import { OnnxError } from '../errors.js';
import type { HeadUnit } from '../channels/types.js';

/**
 * Where a sparsity setting's blocks compete: each layer (the default), each output row of the layer,
 * or every layer with the same setting ranked together model-wide ('global': one pool per distinct
 * sparsity and block, as pruneSparsity's scope 'global' ranks a whole model).
 */
export type SettingScope = 'layer' | 'row' | 'global';

/**
 * A layer's own quantization: int8 / int4 in the forms the quantizer writes for that scheme, or left
 * float. Absent: the job's `quantize` decides (its scheme, or float when it has none).
 */
export type QuantChoice = 'int8' | 'int4' | 'float';

/** One layer's (or channel group's) setting. */
export type Setting =
  /** `block` (default 1x1) and `scope` (default 'layer') are magnitude pruning's, as the job's sparsity mode has them. */
  | { kind: 'sparsity'; sparsity: number; block?: [number, number]; scope?: SettingScope; quantize?: QuantChoice }
  | { kind: 'nm'; nm: [number, number]; quantize?: QuantChoice }
  | { kind: 'channels'; channels: number }
  | { kind: 'dense'; quantize?: QuantChoice };

/** A name pattern: an exact name, a glob (`*`, `?`) or a regular expression written `/…/flags`. */
export interface Pattern { source: string; kind: 'exact' | 'glob' | 'regex'; re: RegExp }

export interface RecipeRule { pattern: Pattern; setting: Setting }

export interface Recipe {
  /** 'weights': sparsity / N:M per layer; 'channels': a kept fraction per channel group. */
  mode: 'weights' | 'channels';
  method?: 'magnitude' | 'wanda' | 'sparsegpt';
  default: Setting;
  /** In file order; exact names are looked up before patterns (match.ts). */
  rules: RecipeRule[];
  ignore: Pattern[];
  roundTo?: number;
  /** Channels only: grouped-query attention's unit (HeadUnit); the groups the names refer to follow it. */
  heads?: HeadUnit;
  meta?: Record<string, unknown>;
}

const KEYS = new Set(['sparsekit', 'method', 'default', 'layers', 'ignore', 'roundTo', 'heads', 'meta']);

export const recipeError = (msg: string, code = 'invalid_recipe') => new OnnxError('unsupported', `recipe: ${msg}`, code);

function escapeRe(s: string): string { return s.replace(/[.+^${}()|[\]\\]/g, '\\$&'); }

/** Compiles a name pattern (see Pattern). */
export function compilePattern(source: unknown, where: string): Pattern {
  if (typeof source !== 'string' || !source.length) throw recipeError(`${where}: a pattern must be a non-empty string (got ${JSON.stringify(source)})`);
  const rx = /^\/(.*)\/([a-z]*)$/s.exec(source);
  if (rx) {
    try { return { source, kind: 'regex', re: new RegExp(rx[1], rx[2]) }; } catch (e) {
      throw recipeError(`${where}: ${source} is not a valid regular expression (${(e as Error).message})`);
    }
  }
  if (/[*?]/.test(source)) {
    const body = source.split('').map((c) => (c === '*' ? '.*' : c === '?' ? '.' : escapeRe(c))).join('');
    return { source, kind: 'glob', re: new RegExp(`^${body}$`) };
  }
  return { source, kind: 'exact', re: new RegExp(`^${escapeRe(source)}$`) };
}

function fraction(v: unknown, what: string, below1 = false): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1 || (below1 && v >= 1)) {
    throw recipeError(`${what} must be a number in [0, ${below1 ? '1)' : '1]'} (got ${JSON.stringify(v)})`);
  }
  return v;
}

/** "4x4" or [4, 4]: a block of two positive integers (rows x cols of the weight's 2-D view). */
function parseBlock(v: unknown, where: string): [number, number] {
  const m = typeof v === 'string' ? /^\s*(\d+)\s*[x×]\s*(\d+)\s*$/.exec(v) : null;
  const b = m ? [Number(m[1]), Number(m[2])] : v;
  if (!Array.isArray(b) || b.length !== 2 || !b.every((x) => Number.isInteger(x) && x >= 1)) {
    throw recipeError(`${where}: block must be "RxC" with two positive integers, e.g. "4x4" (got ${JSON.stringify(v)})`);
  }
  return [b[0], b[1]];
}

/** {"sparsity": S, "block"?: "RxC", "scope"?: "layer" | "row" | "global"}. */
function sparsitySetting(o: Record<string, unknown>, where: string): Setting {
  const s: Setting = { kind: 'sparsity', sparsity: fraction(o.sparsity, `${where}: sparsity`) };
  if (o.block !== undefined) s.block = parseBlock(o.block, where);
  if (o.scope !== undefined) {
    if (!['layer', 'row', 'global'].includes(o.scope as string)) throw recipeError(`${where}: scope must be layer, row or global (got ${JSON.stringify(o.scope)})`);
    s.scope = o.scope as SettingScope;
  }
  return s;
}

/**
 * Parses one setting: {"sparsity": S}, {"nm": "N:M"}, {"channels": F}, "dense" or {"dense": true};
 * beside a sparsity, an nm or dense, "quantize" gives the layer's bits ({"quantize": Q} alone: dense + Q).
 */
export function parseSetting(v: unknown, where: string): Setting {
  if (v === 'dense') return { kind: 'dense' };
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    throw recipeError(`${where}: a setting is {"sparsity": S}, {"nm": "N:M"}, {"channels": F}, {"quantize": Q} or "dense" (got ${JSON.stringify(v)})`);
  }
  const o = v as Record<string, unknown>;
  if (o.quantize === undefined) return pruneSetting(o, where);
  if (!['int8', 'int4', 'float'].includes(o.quantize as string)) throw recipeError(`${where}: quantize must be int8, int4 or float (got ${JSON.stringify(o.quantize)})`);
  const quantize = o.quantize as QuantChoice;
  const rest = { ...o };
  delete rest.quantize;
  const s = Object.keys(rest).length ? pruneSetting(rest, where) : { kind: 'dense' } as Setting;
  if (s.kind === 'channels') throw recipeError(`${where}: quantize applies to weight settings (sparsity, nm, dense), not to channel removal`);
  return { ...s, quantize };
}

/** A setting without its quantize key. */
function pruneSetting(o: Record<string, unknown>, where: string): Setting {
  // block and scope qualify a sparsity: they are not a setting of their own
  const keys = Object.keys(o).filter((k) => !(('sparsity' in o) && (k === 'block' || k === 'scope')));
  if (keys.length !== 1) throw recipeError(`${where}: a setting has exactly one of sparsity / nm / channels / dense (got ${keys.join(', ') || 'none'})`);
  const k = keys[0];
  if (k === 'sparsity') return sparsitySetting(o, where);
  if (k === 'channels') return { kind: 'channels', channels: fraction(o.channels, `${where}: channels`, true) };
  if (k === 'dense') {
    if (o.dense !== true) throw recipeError(`${where}: "dense" must be true (got ${JSON.stringify(o.dense)})`);
    return { kind: 'dense' };
  }
  if (k === 'nm') {
    const m = typeof o.nm === 'string' ? /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec(o.nm) : null;
    const nm = m ? [Number(m[1]), Number(m[2])] as [number, number] : null;
    if (!nm || nm[0] < 1 || nm[1] < 1 || nm[0] > nm[1]) throw recipeError(`${where}: nm must be "N:M" with 1 <= N <= M (got ${JSON.stringify(o.nm)})`);
    return { kind: 'nm', nm };
  }
  throw recipeError(`${where}: unknown setting "${k}" (sparsity, nm, channels, dense or quantize)`);
}

/** Parses and validates a recipe from JSON text or an already parsed object. */
export function parseRecipe(src: string | object): Recipe {
  let o: unknown = src;
  if (typeof src === 'string') {
    try { o = JSON.parse(src); } catch (e) {
      throw recipeError(`not valid JSON (${(e as Error).message})`, 'invalid_json');
    }
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw recipeError('the top level must be a JSON object');
  const r = o as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!KEYS.has(k)) throw recipeError(`unknown key "${k}" (allowed: ${[...KEYS].join(', ')})`);
  if (r.sparsekit !== undefined && r.sparsekit !== 'recipe/1') throw recipeError(`"sparsekit" must be "recipe/1" (got ${JSON.stringify(r.sparsekit)})`);
  if (r.method !== undefined && !['magnitude', 'wanda', 'sparsegpt'].includes(r.method as string)) {
    throw recipeError(`"method" must be magnitude, wanda or sparsegpt (got ${JSON.stringify(r.method)})`);
  }
  const dflt = r.default === undefined ? { kind: 'dense' } as Setting : parseSetting(r.default, '"default"');
  if (r.layers !== undefined && (!r.layers || typeof r.layers !== 'object' || Array.isArray(r.layers))) {
    throw recipeError('"layers" must be an object {"<name or pattern>": setting}');
  }
  const rules = Object.entries((r.layers ?? {}) as Record<string, unknown>).map(([k, v]) => ({
    pattern: compilePattern(k, `layers["${k}"]`), setting: parseSetting(v, `layers["${k}"]`),
  }));
  if (r.ignore !== undefined && !Array.isArray(r.ignore)) throw recipeError('"ignore" must be an array of names or patterns');
  const ignore = ((r.ignore ?? []) as unknown[]).map((p, i) => compilePattern(p, `ignore[${i}]`));
  const kinds = new Set([dflt, ...rules.map((x) => x.setting)].map((s) => s.kind).filter((k) => k !== 'dense'));
  if (kinds.has('channels') && kinds.size > 1) {
    throw recipeError('channel settings and sparsity / nm settings cannot be mixed in one recipe (prune channels first, then apply a second recipe)');
  }
  if (kinds.has('channels') && [dflt, ...rules.map((x) => x.setting)].some((x) => x.kind !== 'channels' && x.quantize)) {
    throw recipeError('quantize applies to weights recipes (sparsity, nm, dense): a channels recipe removes channels only');
  }
  if (r.roundTo !== undefined && !(Number.isInteger(r.roundTo) && (r.roundTo as number) >= 1)) {
    throw recipeError(`"roundTo" must be a positive integer (got ${JSON.stringify(r.roundTo)})`);
  }
  if (r.heads !== undefined && r.heads !== 'groups' && r.heads !== 'query') throw recipeError(`"heads" must be "groups" or "query" (got ${JSON.stringify(r.heads)})`);
  if (r.heads !== undefined && !kinds.has('channels')) throw recipeError('"heads" applies to channels recipes');
  if (r.meta !== undefined && (!r.meta || typeof r.meta !== 'object' || Array.isArray(r.meta))) throw recipeError('"meta" must be an object');
  return {
    mode: kinds.has('channels') ? 'channels' : 'weights',
    method: r.method as Recipe['method'], default: dflt, rules, ignore,
    roundTo: r.roundTo as number | undefined, ...(r.heads !== undefined ? { heads: r.heads as HeadUnit } : {}), meta: r.meta as Record<string, unknown> | undefined,
  };
}

/** A setting as recipe JSON. */
export function settingJson(s: Setting): unknown {
  const q = s.kind !== 'channels' && s.quantize ? { quantize: s.quantize } : {};
  switch (s.kind) {
    case 'dense': return s.quantize ? q : 'dense';
    case 'sparsity': return {
      sparsity: s.sparsity, ...(s.block ? { block: `${s.block[0]}x${s.block[1]}` } : {}), ...(s.scope ? { scope: s.scope } : {}), ...q,
    };
    case 'nm': return { nm: `${s.nm[0]}:${s.nm[1]}`, ...q };
    case 'channels': return { channels: s.channels };
  }
}

/** A setting in a word or two: `sparsity 0.5+int4`, `2:4`, `int8` (dense, 8 bits), `float`, `dense`. */
export function settingLabel(s: Setting): string {
  const q = s.kind !== 'channels' ? s.quantize : undefined;
  if (s.kind === 'dense') return q ?? 'dense';
  const base = s.kind === 'sparsity' ? `sparsity ${s.sparsity}${s.block ? ` block ${s.block[0]}x${s.block[1]}` : ''}${s.scope ? ` scope ${s.scope}` : ''}`
    : s.kind === 'nm' ? `${s.nm[0]}:${s.nm[1]}` : `channels ${s.channels}`;
  return q ? `${base}+${q}` : base;
}

/** A recipe of exact per-layer settings (what the search writes). */
export function recipeJson(p: {
  default?: Setting; layers: Map<string, Setting> | [string, Setting][]; ignore?: string[];
  method?: Recipe['method']; roundTo?: number; heads?: HeadUnit; meta?: Record<string, unknown>;
}): Record<string, unknown> {
  const out: Record<string, unknown> = { sparsekit: 'recipe/1' };
  if (p.method) out.method = p.method;
  out.default = settingJson(p.default ?? { kind: 'dense' });
  // Exact names: a name holding * ? or written /…/ would read as a pattern; escape it as a regex.
  const key = (n: string) => (/[*?]/.test(n) || /^\/.*\/[a-z]*$/s.test(n) ? `/^${n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$/` : n);
  out.layers = Object.fromEntries([...p.layers].map(([n, s]) => [key(n), settingJson(s)]));
  if (p.ignore?.length) out.ignore = p.ignore.map(key);
  if (p.roundTo !== undefined) out.roundTo = p.roundTo;
  if (p.heads === 'query') out.heads = p.heads;
  if (p.meta) out.meta = p.meta;
  return out;
}
