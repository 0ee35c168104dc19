// Loading a model: from the user's files (the .onnx with its external data files) or the default
// model's URL, parsed by the package's ONNX module. A newer load always wins over a slower older one.
import { OnnxModel, OnnxError } from 'sparsekit-wasm/onnx';
import { $, clearError, setStatus, showError } from './dom.js';
import { state, type Loaded } from './state.js';

/** What the rest of the page does when a model goes away or arrives (set by main.ts). */
export interface LoadHooks { reset(): void; loaded(m: Loaded): void }
let hooks: LoadHooks = { reset() {}, loaded() {} };
export function setLoadHooks(h: LoadHooks): void { hooks = h; }

let loadGen = 0;   // bumped by every load: a slower, older load (the start-up default) must not win

export async function loadFiles(list: FileList | File[]): Promise<void> {
  const files = [...list];
  if (!files.length) return;
  const onnx = files.find((f) => /\.onnx$/i.test(f.name)) ?? (files.length === 1 ? files[0] : null);
  if (!onnx) {
    showError(`None of the chosen files is an .onnx model (${files.map((f) => f.name).join(', ')}).`);
    return;
  }
  const gen = ++loadGen;
  resetModel();                                      // now, not after the reads: no stale rows meanwhile
  const external = new Map<string, Uint8Array>();
  for (const f of files) if (f !== onnx) external.set(f.name, new Uint8Array(await f.arrayBuffer()));
  const bytes = new Uint8Array(await onnx.arrayBuffer());
  if (gen === loadGen) loadBytes(onnx.name, bytes, external);
}

export async function loadDefault(): Promise<void> {
  const url = $<HTMLSelectElement>('default-model').value;
  const gen = ++loadGen;
  setStatus('downloading the default model…');
  try {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`HTTP ${res.status} for ${url}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (gen !== loadGen) return;                     // the user chose another model meanwhile
    loadBytes(url.split('/').pop() ?? url, bytes, new Map());
  } catch (e) {
    showError(`Could not load the default model: ${(e as Error).message}`);
  } finally { setStatus(''); }
}

export function resetModel(): void {
  Object.assign(state, { loaded: null, layers: [], others: [], run: null, defaults: null, selected: null });
  for (const id of ['config-card', 'results-card', 'model-info']) $(id).hidden = true;
  $('layers').querySelector('tbody')!.replaceChildren();
  hooks.reset();
}

function loadBytes(name: string, bytes: Uint8Array, external: Map<string, Uint8Array>): void {
  clearError();
  resetModel();
  let model: OnnxModel;
  try {
    model = OnnxModel.parse(bytes, { externalFiles: external, fileName: name });
    const missing = model.missingExternalFiles();
    if (missing.length) {
      const them = missing.length > 1;
      throw new OnnxError('missing_external', `"${name}" keeps its weights in the external data file${them ? 's' : ''} ${missing.map((m) => `"${m}"`).join(', ')}. Choose the .onnx file together with ${them ? 'them' : 'it'} (select or drop both at once).`);
    }
    for (const w of model.weights) model.readFloat(w);     // surfaces corrupt tensor data now
  } catch (e) {
    showError(e instanceof OnnxError ? `${name}: ${e.message}` : `${name} could not be read: ${(e as Error).message}`);
    return;
  }
  state.loaded = { fileName: name, bytes, external, model };
  hooks.loaded(state.loaded);
}
