// The page's state: the loaded model, its layers with their settings, the last run. One object,
// owned by the modules that change it (model-load, defaults, layer-table, run, results).
import type { OnnxModel, OnnxWeight } from 'sparsekit-wasm/onnx';
import type { LayerConfig, PlanItem, Plan } from 'sparsekit-wasm';
import type { LayerResult } from './layer-result.js';
import type { EngineInfo } from './workers/api.js';

/** A model's bytes and its external data files, by name. */
export interface ModelBytes { bytes: Uint8Array; external: Map<string, Uint8Array> }

export interface Loaded extends ModelBytes { fileName: string; model: OnnxModel }

/** A prunable weight: its row index is its id (the worker's results and the layer picker use it). */
export interface Layer {
  w: OnnxWeight;
  id: number;
  cfg: LayerConfig;
  /** The default settings as JSON (a row compares its cfg to it) and why they were chosen. */
  defaultCfg: string;
  defaultKind: PlanItem['kind'];
  defaultNote: string;
  row: HTMLTableRowElement | null;
}

/** The default plan without its items (those live in the layers), with the time it took. */
export type DefaultsSummary = Omit<Plan, 'items'> & { ms: number };

export interface RunOutcome { results: LayerResult[]; pruned: ModelBytes; ms: number }

export const state: {
  loaded: Loaded | null;
  layers: Layer[];
  others: OnnxWeight[];
  defaults: DefaultsSummary | null;
  run: RunOutcome | null;
  selected: number | null;
  running: boolean;
  engine: EngineInfo | { failed: string } | null;
} = { loaded: null, layers: [], others: [], defaults: null, run: null, selected: null, running: false, engine: null };

export const baseName = (): string => (state.loaded?.fileName ?? 'model').replace(/\.onnx$/i, '');
