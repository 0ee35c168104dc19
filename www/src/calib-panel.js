// The calibration card of the playground: criterion per layer and presets (magnitude / Wanda /
// SparseGPT), calibration options, progress and cancel, per-layer relative reconstruction error, the
// held-out output cosine, and the side-by-side comparison of the three criteria (calib-worker.js).
// The layers and input shapes come from the package's ONNX module (the model parsed by it here).
import { OnnxModel, findLayers, resolveInputShape, isDensePrediction } from 'sparsekit-wasm/onnx';
import { loadUserImages } from './calib/user-images.js';

const CRITERIA = [['magnitude', 'magnitude'], ['wanda', 'Wanda'], ['sparsegpt', 'SparseGPT'], ['dense', 'keep dense']];
const $ = (id) => document.getElementById(id);
const newWorker = () => new Worker(new URL('./calib-worker.js', import.meta.url), { type: 'module' });

export function initCalibPanel({ showError, download }) {
  let worker = newWorker();
  let model = null, bytes = null, fileName = '', layers = [], jobId = 0, busy = false, pruned = null;
  const perLayer = {};

  function target() {
    if ($('calib-pattern').value === 'nm') {
      const m = /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec($('calib-nm').value);
      if (!m || +m[1] > +m[2] || +m[2] < 1) throw new Error(`invalid N:M "${$('calib-nm').value}" (e.g. 2:4)`);
      return { nm: [+m[1], +m[2]] };
    }
    const s = Number($('calib-sparsity').value) / 100;
    if (!(s >= 0 && s <= 1)) throw new Error('sparsity must be between 0 and 100%');
    return { sparsity: s };
  }

  function renderTable(report) {
    const tbody = $('calib-layers').querySelector('tbody');
    tbody.replaceChildren();
    const byName = new Map((report?.layers ?? []).map((r) => [r.name, r]));
    for (const l of layers) {
      const tr = document.createElement('tr');
      const td = (x) => { const c = document.createElement('td'); if (x instanceof Node) c.append(x); else c.textContent = x; tr.append(c); return c; };
      td(l.name); td(l.op); td(`${l.rows}×${l.cols}${l.transposed ? ' (transposed)' : ''}${l.group > 1 ? ` · group ${l.group}` : ''}`);
      const sel = document.createElement('select');
      sel.setAttribute('aria-label', `criterion of ${l.name}`);
      sel.append(new Option('(default)', ''));
      for (const [v, label] of CRITERIA) sel.append(new Option(label, v));
      sel.value = perLayer[l.name] ?? '';
      sel.addEventListener('change', () => { if (sel.value) perLayer[l.name] = sel.value; else delete perLayer[l.name]; });
      td(sel);
      const r = byName.get(l.name);
      td(r ? r.method : '');
      td(r ? `${(r.sparsity * 100).toFixed(1)}%` : '');
      const e = td(r && r.relError != null ? r.relError.toFixed(4) : r ? '—' : '');
      e.dataset.testid = 'calib-relerr';
      td(r ? r.notes.join('; ') : (l.note ?? ''));
      tbody.append(tr);
    }
  }

  function setBusy(on, label = '') {
    busy = on;
    $('calib-run').disabled = on || !model;
    $('calib-compare').disabled = on || !model;
    $('calib-cancel').disabled = !on;
    $('calib-progress').hidden = !on;
    $('calib-status').textContent = label;
  }

  function request(msg) {
    return new Promise((resolve, reject) => {
      const id = ++jobId;
      const onMsg = (ev) => {
        const d = ev.data;
        if (d.jobId !== id) return;
        if (d.type === 'progress') {
          $('calib-progress').value = d.total ? d.done / d.total : 0;
          $('calib-status').textContent = `${d.phase} · ${Math.floor(d.done)}/${d.total} layers${d.layer ? ` · ${d.layer}` : ''}`;
          return;
        }
        worker.removeEventListener('message', onMsg);
        if (d.type === 'error') reject(Object.assign(new Error(d.error.message), d.error)); else resolve(d);
      };
      worker.addEventListener('message', onMsg);
      worker.postMessage({ ...msg, jobId: id }, []);
    });
  }

  async function options() {
    const input = model.inputs[0];
    const shape = input ? resolveInputShape(input, model.outputs) : [];
    const files = [...($('calib-images').files ?? [])];
    const images = files.length && shape.length === 4 ? await loadUserImages(files, [shape[2], shape[3]]) : [];
    const num = (id, min) => { const v = Number($(id).value); if (!(v >= min)) throw new Error(`${$(id).getAttribute('aria-label') ?? id} must be >= ${min}`); return v; };
    return {
      bytes: bytes.slice(), base: document.baseURI, criterion: $('calib-criterion').value, perLayer: { ...perLayer }, target: target(),
      pages: Math.floor(num('calib-pages', 0)), heldOut: Math.floor(num('calib-heldout', 1)), images,
      sequential: !$('calib-onepass').checked, blockSize: Math.floor(num('calib-block', 1)), percDamp: num('calib-damp', 0),
      normalization: $('calib-norm').value,
    };
  }

  async function run(type) {
    if (!model || busy) return;
    let msg;
    try { msg = await options(); } catch (e) { showError(e.message); return; }
    if (msg.pages + msg.images.length < 1) { showError('Calibration needs at least one page or image.'); return; }
    setBusy(true, 'starting…');
    const t0 = performance.now();
    try {
      if (type === 'run') {
        const res = await request({ ...msg, type: 'run' });
        pruned = res.bytes;
        renderTable(res.report);
        const s = $('calib-summary');
        s.replaceChildren();
        const v = document.createElement('strong');
        v.dataset.testid = 'calib-cosine';
        v.textContent = res.cosine.cosine.toFixed(5);
        s.append('Output cosine on held-out inputs (mean over ', String(msg.heldOut), '): ', v,
          ` (min ${res.cosine.min.toFixed(4)}) · ${res.report.sequential ? 'sequential' : 'one pass'}, ${res.report.calibration} calibration inputs, ${res.report.passes} model passes, ${((performance.now() - t0) / 1000).toFixed(1)} s · kernels: ${res.engine}`);
        $('calib-export').hidden = false;
      } else {
        const res = await request({ ...msg, type: 'compare' });
        const tbody = $('calib-compare-table').querySelector('tbody');
        tbody.replaceChildren();
        for (const r of res.rows) {
          const tr = document.createElement('tr');
          tr.dataset.criterion = r.criterion;
          for (const x of [r.criterion, r.cosine.toFixed(5), r.min.toFixed(4), String(r.layers)]) { const td = document.createElement('td'); td.textContent = x; tr.append(td); }
          tr.children[1].dataset.testid = `compare-${r.criterion}`;
          tbody.append(tr);
        }
        $('calib-compare-table').hidden = false;
      }
      setBusy(false, 'done');
    } catch (e) {
      setBusy(false, e.code === 'cancelled' ? 'cancelled' : '');
      if (e.code !== 'cancelled') showError(`Calibration failed: ${e.message}`);
    }
  }

  $('calib-run').addEventListener('click', () => run('run'));
  $('calib-compare').addEventListener('click', () => run('compare'));
  $('calib-cancel').addEventListener('click', () => { worker.postMessage({ type: 'cancel' }); $('calib-status').textContent = 'cancelling…'; });
  $('calib-pattern').addEventListener('change', () => { const nm = $('calib-pattern').value === 'nm'; $('calib-nm').disabled = !nm; $('calib-sparsity').disabled = nm; });
  $('calib-pattern').dispatchEvent(new Event('change'));
  for (const b of document.querySelectorAll('#calib-card [data-preset]')) {
    b.addEventListener('click', () => {
      const [criterion, ...rest] = b.dataset.preset.split(':');
      $('calib-criterion').value = criterion;
      if (rest.length === 2) { $('calib-pattern').value = 'nm'; $('calib-nm').value = rest.join(':'); } else { $('calib-pattern').value = 'unstructured'; $('calib-sparsity').value = rest[0]; }
      $('calib-pattern').dispatchEvent(new Event('change'));
      for (const k of Object.keys(perLayer)) delete perLayer[k];
      renderTable(null);
    });
  }
  $('calib-export').addEventListener('click', () => { if (pruned) download(fileName.replace(/\.onnx$/i, '') + '.calibrated.onnx', pruned); });

  return {
    /** A new model was loaded (external data: calibration is not offered). */
    setModel(m, b, name, hasExternal) {
      if (busy) { worker.terminate(); worker = newWorker(); setBusy(false, ''); }
      model = hasExternal || !m ? null : OnnxModel.parse(b); bytes = b; fileName = name; pruned = null;
      for (const k of Object.keys(perLayer)) delete perLayer[k];
      layers = model ? findLayers(model) : [];
      $('calib-card').hidden = !m;
      $('calib-unsupported').hidden = !hasExternal;
      $('calib-export').hidden = true;
      $('calib-compare-table').hidden = true;
      $('calib-summary').replaceChildren();
      $('calib-norm').value = model && isDensePrediction(model) ? 'imagenet' : 'symmetric';
      renderTable(null);
      setBusy(false, '');
    },
  };
}
