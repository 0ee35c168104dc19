// Module worker of the "remove channels" card: finds the channel groups of a model and removes a
// fraction of channels with sparsekit-wasm/onnx, off the page's thread (the scoring runs in wasm).
import init from 'sparsekit-wasm';
import { loadOnnx, findChannelGroups, removeChannels } from 'sparsekit-wasm/onnx';

let ready = null;

/** The groups as the card shows them: counts and members, no internal maps. */
const summarize = (groups) => groups.map((g) => ({
  id: g.id, producers: g.producers, channels: g.channels, prunable: g.prunable, reason: g.reason,
  members: g.members.map((m) => ({ tensor: m.tensor, axis: m.axis, kind: m.kind })),
}));

self.onmessage = async (ev) => {
  const { jobId, type, bytes, fraction, scope, roundTo } = ev.data;
  try {
    ready ??= init({ threads: false });
    await ready;
    const model = await loadOnnx(bytes);
    const groups = summarize(findChannelGroups(model).groups);
    if (type === 'groups') { self.postMessage({ type: 'groups', jobId, groups }); return; }
    const t0 = performance.now();
    const report = removeChannels(model, { fraction, scope, roundTo });
    const out = model.encode();
    const ms = performance.now() - t0;
    self.postMessage({ type: 'removed', jobId, groups, report: JSON.parse(JSON.stringify(report)), bytes: out, ms }, [out.buffer]);
  } catch (e) {
    self.postMessage({ type: 'error', jobId, error: { name: e?.name ?? 'Error', code: e?.code, message: String(e?.message ?? e) } });
  }
};
