// The "remove channels" card: channel groups of the loaded model (hover a row: its members),
// structured removal in workers/channels-worker.ts, parameters / file size / onnxruntime-web latency
// before and after (interleaved after a warm-up), the output cosine on the same input, and the
// export of the reduced model.
import { $, button, download, input, select, showError, statTile } from '../dom.js';
import { fmtBytes, fmtNum } from '../format.js';
import { compareOutputs } from '../model-input.js';
import { benchFidelity, fidelityList, fidelitySub } from '../fidelity-view.js';
import { interleavedRun } from '../test-input.js';
import type { ChannelsReport, GroupSummary, HeadUnit } from '../workers/api.js';
import { channelsClient } from '../workers.js';

let bytes: Uint8Array | null = null, fileName = '', groups: GroupSummary[] = [], reduced: Uint8Array | null = null;
let busy = false, gen = 0;

function renderGroups(report: ChannelsReport | null): void {
  const after = new Map((report?.groups.removed ?? []).map((g) => [g.id, g]));
  const tbody = $('channels-groups').querySelector('tbody')!;
  tbody.replaceChildren();
  for (const g of groups) {
    const tr = document.createElement('tr');
    tr.dataset.group = String(g.id);
    tr.title = g.members.map((m) => `${m.tensor} (axis ${m.axis}${m.kind === 'weight' ? '' : `, ${m.kind}`})`).join('\n');
    const r = after.get(g.id);
    const cells = [String(g.id), g.producers.join(', '), String(g.channels), String(g.members.length),
      r ? String(r.channelsAfter) : (report ? String(g.channels) : ''),
      g.prunable ? (g.runs ? `query heads of ${g.runs} KV groups, each keeping as many` : '') : (g.reason ?? 'kept whole')];
    for (const c of cells) { const td = document.createElement('td'); td.textContent = c; tr.append(td); }
    tbody.append(tr);
  }
}

const headUnit = (): HeadUnit => (select('channels-heads').value === 'query' ? 'query' : 'groups');

function readSettings(): { fraction: number; roundTo: number; runs: number } | null {
  const fraction = Number(input('channels-fraction').value) / 100;
  const roundTo = Math.floor(Number(input('channels-round').value));
  const runs = Math.floor(Number(input('channels-runs').value));
  if (!(fraction >= 0 && fraction < 1)) { showError('The channel fraction must be at least 0% and below 100%.'); return null; }
  if (!(roundTo >= 1)) { showError('Round kept channels to a positive integer.'); return null; }
  if (!(runs >= 1)) { showError('Latency runs must be at least 1.'); return null; }
  return { fraction, roundTo, runs };
}

async function run(): Promise<void> {
  const original = bytes;
  const settings = readSettings();
  if (!original || busy || !settings) return;
  const { fraction, roundTo, runs } = settings;
  const my = gen;
  busy = true;
  button('channels-run').disabled = true;
  $('channels-export').hidden = true;
  $('channels-summary').replaceChildren();
  $('channels-status').textContent = 'removing channels…';
  try {
    const scope = select('channels-scope').value === 'global' ? 'global' : 'layer';
    const res = await channelsClient.request('remove', { bytes: original.slice(), fraction, scope, roundTo, heads: headUnit() });
    if (my !== gen) return;
    reduced = res.bytes;
    renderGroups(res.report);
    $('channels-status').textContent = `measuring with onnxruntime-web (1 warm-up, then ${runs} interleaved runs each)…`;
    const { res: b, inputs } = await interleavedRun({ bytes: original, external: new Map() }, { bytes: reduced, external: new Map() }, runs, 1);
    if (my !== gen) return;
    const cmp = compareOutputs(b.a.outputs, b.b.outputs);
    const fid = benchFidelity(b.a, b.b);
    const box = $('channels-summary');
    const big = document.createElement('div'); big.className = 'totals';
    const p = res.report.params;
    big.append(
      statTile('parameters before → after', `${fmtNum(p.before)} → ${fmtNum(p.after)}`, 'channels-params'),
      statTile('file size before → after', `${fmtBytes(original.length)} → ${fmtBytes(reduced.length)}`, 'channels-size'),
      statTile(`latency before → after (median of ${runs}, interleaved)`, `${b.a.medianMs.toFixed(1)} → ${b.b.medianMs.toFixed(1)} ms`, 'channels-latency'),
      statTile('fidelity (worst output)', fid.score.toFixed(4), 'channels-fidelity', fidelitySub(fid)),
      statTile('output cosine', cmp.cosine.toFixed(5), 'channels-cosine'),
    );
    box.append(big, fidelityList(fid));
    const note = document.createElement('p');
    note.className = 'note';
    const folded = res.report.folded;
    note.textContent = `${res.report.groups.removed.length} groups cut, ${res.report.groups.kept.length} kept whole · ${folded.biases} biases folded${folded.created ? ` (${folded.created} created)` : ''} · removal ${res.ms.toFixed(0)} ms · speedup ${(b.a.medianMs / b.b.medianMs).toFixed(2)}× · input ${inputs.map((i) => i.shape.join('×')).join(', ')}`;
    box.append(note);
    box.dataset.paramsBefore = String(p.before);
    box.dataset.paramsAfter = String(p.after);
    $('channels-export').hidden = false;
    $('channels-status').textContent = 'done';
  } catch (e) {
    if (my === gen) { $('channels-status').textContent = ''; showError(`Channel removal failed: ${(e as Error).message}`); }
  } finally {
    if (my === gen) { busy = false; button('channels-run').disabled = !bytes; }
  }
}

export function initChannelsPanel(): void {
  button('channels-run').addEventListener('click', run);
  // The head unit changes what the groups are: list them again.
  select('channels-heads').addEventListener('change', () => { if (bytes && !busy) void listGroups(); });
  button('channels-export').addEventListener('click', () => { if (reduced) download(fileName.replace(/\.onnx$/i, '') + '.channels.onnx', reduced); });
}

/** A new model was loaded (or none): list its channel groups. */
export async function setChannelsModel(b: Uint8Array | null, name: string, hasExternal: boolean): Promise<void> {
  gen++;
  if (busy) { channelsClient.restart(); busy = false; }
  bytes = b && !hasExternal ? b : null; fileName = name; reduced = null; groups = [];
  $('channels-card').hidden = !b;
  $('channels-unsupported').hidden = !hasExternal;
  $('channels-export').hidden = true;
  $('channels-summary').replaceChildren();
  $('channels-status').textContent = '';
  button('channels-run').disabled = true;
  renderGroups(null);
  if (bytes) await listGroups();
}

/** The loaded model's channel groups under the chosen head unit. */
async function listGroups(): Promise<void> {
  if (!bytes) return;
  const my = ++gen;
  reduced = null;
  $('channels-export').hidden = true;
  $('channels-summary').replaceChildren();
  try {
    const res = await channelsClient.request('groups', { bytes: bytes.slice(), heads: headUnit() });
    if (my !== gen) return;
    groups = res.groups;
    renderGroups(null);
    const n = groups.filter((g) => g.prunable).length;
    $('channels-status').textContent = `${groups.length} channel groups, ${n} removable`;
    button('channels-run').disabled = n === 0;
  } catch (e) {
    if (my === gen) showError(`Finding the channel groups failed: ${(e as Error).message}`);
  }
}
