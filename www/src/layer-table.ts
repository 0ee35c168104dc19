// The layer table: one row per prunable weight with its settings (criterion, block, scope,
// sparsity, N:M), what its default was and why, the "apply to all" bar and the run button's state.
// Each row is one entry of a recipe (layer-recipe.ts): only what a job can run is offered: blocks
// at a sparsity (per layer, per row, or ranked model-wide), N:M, or dense.
import { $, button, input, makeCell, select, setStatus } from './dom.js';
import { engineReady } from './engine.js';
import { fmtInt, fmtPair, parseNM, parsePair } from './format.js';
import { state, type Layer } from './state.js';
import { fitBlock, type LayerConfig } from 'sparsekit-wasm';
import type { OnnxWeight } from 'sparsekit-wasm/onnx';

const CRITERIA: [LayerConfig['criterion'], string][] = [['hard', 'blocks'], ['nm', 'N:M'], ['none', 'dense']];

/** A scope the job runs: the whole layer ("all") or each row of blocks ("1xall"); null otherwise. */
export function parseScope(s: string): [number, number] | null {
  const p = parsePair(s, true);
  return p && p[1] === -1 && (p[0] === -1 || p[0] === 1) ? p : null;
}

/** The note of the package's block fallback for this weight (a block that does not divide its view), or null. */
function blockNote(layer: Layer): string | null {
  const v = layer.w.view;
  return v ? fitBlock(v.rows, v.cols, layer.cfg.block).note : null;
}

/** Rebuilds the table (and the other-weights list and the op picker); `onRowClick` gets a layer id. */
export function renderLayerTable(onRowClick: (id: number) => void): void {
  const tbody = $('layers').querySelector('tbody')!;
  tbody.replaceChildren();
  for (const layer of state.layers) {
    const { w } = layer;
    const tr = document.createElement('tr');
    tr.dataset.layer = w.name;
    layer.row = tr;
    const nameCell = makeCell(tr, w.name);
    nameCell.className = 'name';
    const why = document.createElement('div');
    why.className = 'why';
    why.dataset.testid = 'default-why';
    nameCell.append(why);
    makeCell(tr, w.op ?? '');
    makeCell(tr, w.dims.join('×') + (w.dtypeName !== 'float32' ? ` ${w.dtypeName}` : ''));
    makeCell(tr, fmtInt(w.numel)).className = 'num';
    const crit = document.createElement('select');
    for (const [v, t] of CRITERIA) crit.add(new Option(t, v));
    crit.dataset.field = 'criterion';
    makeCell(tr, crit);
    const mk = (field: string, size: number, title: string) => {
      const i = document.createElement('input'); i.dataset.field = field; i.size = size; i.title = title; makeCell(tr, i); return i;
    };
    mk('block', 5, 'block shape: rows x cols of the weight viewed as outputs x inputs');
    mk('scope', 5, 'where blocks compete: all (the whole layer) or 1xall (each row of blocks)');
    const sp = mk('sparsity', 3, 'target sparsity (%)');
    sp.type = 'number'; sp.min = '0'; sp.max = '100'; sp.step = '5';
    mk('nm', 4, 'N:M pattern, e.g. 2:4');
    makeCell(tr, '').className = 'result';
    tr.addEventListener('change', (e) => readRow(layer, e.target as HTMLInputElement | HTMLSelectElement));
    tr.addEventListener('click', (e) => { if ((e.target as HTMLElement).tagName === 'TD' && state.run) onRowClick(layer.id); });
    writeRow(layer);
    tbody.append(tr);
  }
  renderOthers();
  const ops = [...new Set(state.layers.map((l) => l.w.op ?? '?'))];
  const sel = select('bulk-op');
  sel.replaceChildren(new Option(`every (${state.layers.length})`, '*'));
  for (const op of ops) sel.add(new Option(`${op} (${state.layers.filter((l) => l.w.op === op).length})`, op));
}

/** The float tensors that are not pruned (biases, norms, constants), folded away under the table. */
function renderOthers(): void {
  const det = $('other-weights');
  det.hidden = !state.others.length;
  det.querySelector('summary')!.textContent = `${state.others.length} other float tensors (biases, norms, constants): not pruned`;
  const ob = det.querySelector('tbody')!;
  ob.replaceChildren();
  for (const w of state.others.slice(0, 500)) {
    const tr = document.createElement('tr');
    makeCell(tr, w.name).className = 'name';
    makeCell(tr, useOf(w));
    makeCell(tr, w.dims.join('×') || 'scalar');
    makeCell(tr, fmtInt(w.numel)).className = 'num';
    ob.append(tr);
  }
}

/** How the graph uses a tensor that is not pruned, e.g. "Conv (input 2)" for a bias. */
function useOf(w: OnnxWeight): string {
  if (w.op) return `${w.op} (weight)`;
  const [op, index] = (w.consumers[0] ?? '').split('#');
  return op ? `${op} (input ${index})` : 'unused';
}

/** Shows a layer's settings in its row, with its default's reason and the plan's notes. */
export function writeRow(layer: Layer): void {
  const { cfg, row } = layer;
  if (!row) return;
  const f = <T extends HTMLInputElement | HTMLSelectElement = HTMLInputElement>(name: string) => row.querySelector<T>(`[data-field="${name}"]`)!;
  const globalOn = input('global-enabled').checked;
  f<HTMLSelectElement>('criterion').value = cfg.criterion;
  f('block').value = fmtPair(cfg.block);
  f('scope').value = fmtPair(cfg.scope);
  f('sparsity').value = String(Math.round(cfg.sparsity * 1000) / 10);
  f('nm').value = `${cfg.n}:${cfg.m}`;
  const nm = cfg.criterion === 'nm', dense = cfg.criterion === 'none';
  f('block').disabled = nm || dense;
  f('scope').disabled = nm || dense || (globalOn && cfg.criterion === 'hard');
  f('sparsity').disabled = nm || dense || (globalOn && cfg.criterion === 'hard');
  f('nm').disabled = !nm;
  const note = blockNote(layer);
  const isDefault = JSON.stringify(cfg) === layer.defaultCfg;
  const why = row.querySelector('.why')!;
  why.textContent = isDefault ? `default: ${layer.defaultNote}` : `changed (default: ${layer.defaultNote})`;
  why.classList.toggle('changed', !isDefault);
  row.dataset.default = isDefault ? layer.defaultKind : 'changed';
  row.title = nm || dense || !note ? '' : note;
  f('block').classList.toggle('warn', !nm && !dense && !!note);
  for (const el of row.querySelectorAll('input')) el.classList.remove('invalid');
}

function readRow(layer: Layer, target: HTMLInputElement | HTMLSelectElement): void {
  const { cfg } = layer;
  const v = target.value;
  let ok = true;
  switch (target.dataset.field) {
    case 'criterion': cfg.criterion = v as LayerConfig['criterion']; break;
    case 'block': { const p = parsePair(v, false); ok = !!p; if (p) cfg.block = p; break; }
    case 'scope': { const p = parseScope(v); ok = !!p; if (p) cfg.scope = p; break; }
    case 'sparsity': { const x = Number(v); ok = v !== '' && x >= 0 && x <= 100; if (ok) cfg.sparsity = x / 100; break; }
    case 'nm': { const p = parseNM(v); ok = !!p; if (p) [cfg.n, cfg.m] = p; break; }
    default: return;
  }
  if (ok) writeRow(layer); else target.classList.add('invalid');
  updateRunButton();
}

/** "Apply to all": the bar's settings on every layer of the chosen op. */
export function applyBulk(): void {
  const op = select('bulk-op').value;
  const block = parsePair(input('bulk-block').value, false);
  const scope = parseScope(input('bulk-scope').value);
  const sparsity = Number(input('bulk-sparsity').value);
  const nm = parseNM(input('bulk-nm').value);
  if (!block || !scope || !nm || !(sparsity >= 0 && sparsity <= 100)) {
    const bad = [!block && 'block', !scope && 'scope', !(sparsity >= 0 && sparsity <= 100) && 'sparsity', !nm && 'N:M'].filter(Boolean);
    setStatus(`Invalid ${bad.join(', ')} in "apply to all".`);
    return;
  }
  let count = 0;
  for (const layer of state.layers) {
    if (op !== '*' && layer.w.op !== op) continue;
    Object.assign(layer.cfg, { criterion: select('bulk-criterion').value, block, scope, sparsity: sparsity / 100, n: nm[0], m: nm[1] });
    writeRow(layer);
    count++;
  }
  setStatus(`Applied to ${count} layer${count === 1 ? '' : 's'}.`);
  updateRunButton();
}

/** The bulk bar's fields that apply to the chosen criterion. */
export function syncBulkFields(): void {
  const nm = select('bulk-criterion').value === 'nm';
  input('bulk-nm').disabled = !nm;
  for (const id of ['bulk-block', 'bulk-scope', 'bulk-sparsity']) input(id).disabled = nm;
}

/** Run is possible with a model, layers, a started engine, no run in flight and no invalid field. */
export function updateRunButton(): void {
  const invalid = state.layers.some((l) => l.row?.querySelector('input.invalid'));
  button('run').disabled = !state.loaded || !state.layers.length || state.running || !engineReady() || invalid;
  input('global-keep').disabled = !input('global-enabled').checked;
}
