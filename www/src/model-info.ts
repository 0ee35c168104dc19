// The model card's summary: file, producer, graph size, prunable weights, and the test input fields.
import { $ } from './dom.js';
import { fmtBytes, fmtInt } from './format.js';
import { state, type Loaded } from './state.js';
import { inputFields } from './test-input.js';

export function renderModelInfo({ fileName, bytes, external, model: m }: Loaded): void {
  const params = state.layers.reduce((a, l) => a + l.w.numel, 0);
  const allFloat = m.weights.reduce((a, w) => a + w.numel, 0);
  const ops: Record<string, number> = {};
  for (const l of state.layers) ops[l.w.op ?? '?'] = (ops[l.w.op ?? '?'] ?? 0) + 1;
  const info = $('model-info');
  info.hidden = false;
  info.replaceChildren();
  const dl = document.createElement('dl');
  const add = (k: string, v: Node | string) => {
    const dt = document.createElement('dt'); dt.textContent = k;
    const dd = document.createElement('dd'); if (v instanceof Node) dd.append(v); else dd.textContent = v;
    dl.append(dt, dd);
  };
  add('File', `${fileName} (${fmtBytes(bytes.length)})${external.size ? ` + ${[...external.keys()].join(', ')}` : ''}`);
  add('Producer', `${m.model.producer_name || 'unknown producer'} ${m.model.producer_version || ''} · IR ${m.irVersion} · opset ${m.opsets.join(', ')}`);
  add('Graph', `${m.graph.node.length} nodes · ${m.weights.length} float tensors (${fmtInt(allFloat)} values)`);
  add('Prunable', `${state.layers.length} weights (${Object.entries(ops).map(([k, v]) => `${v} ${k}`).join(', ')}) · ${fmtInt(params)} parameters`);
  add('Test input', inputFields(m));
  info.append(dl);
}
