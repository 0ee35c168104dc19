// The "remove channels" card: channel groups of the loaded model (hover a row: its members),
// structured removal in channels-worker.js, parameters / file size / onnxruntime-web latency before
// and after, the output cosine on the same input, and the export of the reduced model.
import { compareOutputs } from './model-input.js';
import { fmtNum } from './render.js';

const $ = (id) => document.getElementById(id);
const newWorker = () => new Worker(new URL('./channels-worker.js', import.meta.url), { type: 'module' });
const fmtBytes = (n) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(2)} MiB` : `${(n / 1024).toFixed(1)} KiB`);

/**
 * `evalRequest(msg)` posts to the onnxruntime-web worker; `inputSpecs()` gives the test input
 * shapes chosen in the model card (the same input feeds both models).
 */
export function initChannelsPanel({ showError, download, evalRequest, inputSpecs }) {
  let worker = newWorker();
  let bytes = null, fileName = '', groups = [], reduced = null, jobId = 0, busy = false, gen = 0;

  function request(msg, transfer = []) {
    return new Promise((resolve, reject) => {
      const id = ++jobId;
      const onMsg = (ev) => {
        if (ev.data.jobId !== id) return;
        worker.removeEventListener('message', onMsg);
        if (ev.data.type === 'error') reject(Object.assign(new Error(ev.data.error.message), ev.data.error)); else resolve(ev.data);
      };
      worker.addEventListener('message', onMsg);
      worker.postMessage({ ...msg, jobId: id }, transfer);
    });
  }

  function renderGroups(report) {
    const kept = new Map();
    for (const g of report?.groups.removed ?? []) kept.set(g.id, g);
    const tbody = $('channels-groups').querySelector('tbody');
    tbody.replaceChildren();
    for (const g of groups) {
      const tr = document.createElement('tr');
      tr.dataset.group = String(g.id);
      tr.title = g.members.map((m) => `${m.tensor} (axis ${m.axis}${m.kind === 'weight' ? '' : `, ${m.kind}`})`).join('\n');
      const r = kept.get(g.id);
      const cells = [String(g.id), g.producers.join(', '), String(g.channels), String(g.members.length),
        r ? String(r.channelsAfter) : (report ? String(g.channels) : ''), g.prunable ? '' : (g.reason ?? 'kept whole')];
      for (const c of cells) { const td = document.createElement('td'); td.textContent = c; tr.append(td); }
      tbody.append(tr);
    }
  }

  function stat(box, label, value, testid) {
    const d = document.createElement('div'); d.className = 'stat';
    const v = document.createElement('div'); v.className = 'value'; v.textContent = value; if (testid) v.dataset.testid = testid;
    const l = document.createElement('div'); l.className = 'label'; l.textContent = label;
    d.append(v, l); box.append(d);
  }

  async function run() {
    if (!bytes || busy) return;
    const fraction = Number($('channels-fraction').value) / 100;
    const roundTo = Math.floor(Number($('channels-round').value));
    const runs = Math.floor(Number($('channels-runs').value));
    if (!(fraction >= 0 && fraction < 1)) { showError('The channel fraction must be at least 0% and below 100%.'); return; }
    if (!(roundTo >= 1)) { showError('Round kept channels to a positive integer.'); return; }
    if (!(runs >= 1)) { showError('Latency runs must be at least 1.'); return; }
    let inputs;
    try { inputs = inputSpecs(); } catch (e) { showError(e.message); return; }
    const my = gen;
    busy = true;
    $('channels-run').disabled = true;
    $('channels-export').hidden = true;
    $('channels-summary').replaceChildren();
    $('channels-status').textContent = 'removing channels…';
    try {
      const res = await request({ type: 'remove', bytes: bytes.slice(), fraction, scope: $('channels-scope').value, roundTo });
      if (my !== gen) return;
      reduced = res.bytes;
      renderGroups(res.report);
      $('channels-status').textContent = `measuring with onnxruntime-web (${runs} interleaved runs each)…`;
      const b = await evalRequest({ type: 'bench', a: bytes.slice(), b: reduced.slice(), inputs, runs });
      if (my !== gen) return;
      const cmp = compareOutputs(b.a.outputs, b.b.outputs);
      const box = $('channels-summary');
      const big = document.createElement('div'); big.className = 'totals';
      const p = res.report.params;
      stat(big, 'parameters before → after', `${fmtNum(p.before)} → ${fmtNum(p.after)}`, 'channels-params');
      stat(big, 'file size before → after', `${fmtBytes(bytes.length)} → ${fmtBytes(reduced.length)}`, 'channels-size');
      stat(big, `latency before → after (median of ${runs})`, `${b.a.medianMs.toFixed(1)} → ${b.b.medianMs.toFixed(1)} ms`, 'channels-latency');
      stat(big, 'output cosine', cmp.cosine.toFixed(5), 'channels-cosine');
      box.append(big);
      const note = document.createElement('p');
      note.className = 'note';
      note.textContent = `${res.report.groups.removed.length} groups cut, ${res.report.groups.kept.length} kept whole · ${res.report.folded.biases} biases folded${res.report.folded.created ? ` (${res.report.folded.created} created)` : ''} · removal ${res.ms.toFixed(0)} ms · speedup ${(b.a.medianMs / b.b.medianMs).toFixed(2)}× · input ${inputs.map((i) => i.shape.join('×')).join(', ')}`;
      box.append(note);
      box.dataset.paramsBefore = String(p.before);
      box.dataset.paramsAfter = String(p.after);
      $('channels-export').hidden = false;
      $('channels-status').textContent = 'done';
    } catch (e) {
      if (my === gen) { $('channels-status').textContent = ''; showError(`Channel removal failed: ${e.message}`); }
    } finally {
      if (my === gen) { busy = false; $('channels-run').disabled = !bytes; }
    }
  }

  $('channels-run').addEventListener('click', run);
  $('channels-export').addEventListener('click', () => { if (reduced) download(fileName.replace(/\.onnx$/i, '') + '.channels.onnx', reduced); });

  return {
    /** A new model was loaded (or none): list its channel groups. */
    async setModel(b, name, hasExternal) {
      gen++;
      if (busy) { worker.terminate(); worker = newWorker(); busy = false; }
      bytes = b && !hasExternal ? b : null; fileName = name ?? ''; reduced = null; groups = [];
      $('channels-card').hidden = !b;
      $('channels-unsupported').hidden = !hasExternal;
      $('channels-export').hidden = true;
      $('channels-summary').replaceChildren();
      $('channels-status').textContent = '';
      $('channels-run').disabled = true;
      renderGroups(null);
      if (!bytes) return;
      const my = gen;
      try {
        const res = await request({ type: 'groups', bytes: bytes.slice() });
        if (my !== gen) return;
        groups = res.groups;
        renderGroups(null);
        const n = groups.filter((g) => g.prunable).length;
        $('channels-status').textContent = `${groups.length} channel groups, ${n} removable`;
        $('channels-run').disabled = n === 0;
      } catch (e) {
        if (my === gen) showError(`Finding the channel groups failed: ${e.message}`);
      }
    },
  };
}
