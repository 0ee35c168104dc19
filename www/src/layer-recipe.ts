// The layer table as a recipe (pkg-template/src/onnx/recipe/recipe.ts's format): one exact-name
// entry per prunable weight, the JSON that `sparsekit-wasm prune --recipe` and runJob's recipe mode
// read. The page runs it as a job (run.ts) and offers it as a download, so the table's settings are
// the package's settings: the package parses, validates and applies them.
import { PlaygroundError } from './protocol.js';
import type { Layer } from './state.js';

/** The model-wide scope of the table: every block layer ranked together, `keep` of their blocks kept. */
export interface GlobalScope { enabled: boolean; keep: number }

/**
 * A weight's name as an exact recipe key. A name holding * or ? or written /…/ would read as a glob
 * or a regular expression: it is written as an anchored, escaped regular expression instead (the
 * rule of the package's recipeJson, which the search's recipes use).
 */
function key(name: string): string {
  return /[*?]/.test(name) || /^\/.*\/[a-z]*$/s.test(name) ? `/^${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$/` : name;
}

/** One row's setting as recipe JSON. */
function setting(l: Layer, global: GlobalScope): unknown {
  const { cfg } = l;
  if (cfg.criterion === 'none') return 'dense';
  if (cfg.criterion === 'nm') return { nm: `${cfg.n}:${cfg.m}` };
  if (cfg.criterion !== 'hard') throw new PlaygroundError('invalid_arguments', `${l.w.name}: ${cfg.criterion} is not a setting a job runs (blocks, N:M or dense)`);
  const block = cfg.block[0] === 1 && cfg.block[1] === 1 ? {} : { block: `${cfg.block[0]}x${cfg.block[1]}` };
  if (global.enabled) return { sparsity: 1 - global.keep, ...block, scope: 'global' };
  const row = cfg.scope[0] === 1 && cfg.scope[1] === -1;
  return { sparsity: cfg.sparsity, ...block, ...(row ? { scope: 'row' } : {}) };
}

/**
 * The table's recipe: every row by its weight's exact name, nothing left to the default; no method
 * (magnitude unless the job, or the CLI's --method, says otherwise).
 */
export function layerRecipe(layers: readonly Layer[], global: GlobalScope): Record<string, unknown> {
  return {
    sparsekit: 'recipe/1',
    default: 'dense',
    layers: Object.fromEntries(layers.map((l) => [key(l.w.name), setting(l, global)])),
  };
}
