// `sparsekit-wasm inspect IN.onnx`: the prunable weights (consumer op, stored shape, the 2-D view the
// pruning uses, data type, storage) and the channel groups that --channels would prune, with the
// groups left whole and why. --report R.json writes the same as JSON (- prints it on stdout).
import { loadOnnx, findChannelGroups } from 'sparsekit-wasm/onnx';
import { modelInput } from '../cli/model-input.js';
import { parse, help, oneFile } from '../cli/args.js';
import { PROG } from '../cli/errors.js';
import { table, fmtShape, fmtBytes, writeJson } from '../cli/print.js';
import { subgraphNote } from './prune.js';

/** @typedef {import('sparsekit-wasm/onnx').OnnxWeight} OnnxWeight */
/** @typedef {import('sparsekit-wasm/onnx').WeightView} WeightView */
/** A weight of model.prunable(): those carry their 2-D view. @typedef {OnnxWeight & { view: WeightView }} PrunableWeight */

export const SUMMARY = 'inspect IN.onnx                        list prunable weights, shapes, ops and channel groups';

/** @param {string[]} argv */
export async function main(argv) {
  const { values, positionals } = parse('inspect', argv);
  if (values.help) return void console.log(help('inspect', `Usage: ${PROG} inspect IN.onnx [--report R.json|-]`));
  const file = (await modelInput(oneFile(positionals, 'inspect'))).model;
  const model = await loadOnnx(file);
  const ws = /** @type {PrunableWeight[]} */ (model.prunable());
  const groups = findChannelGroups(model);
  const info = {
    file, bytes: model.byteLength, irVersion: model.irVersion, opsets: model.opsets,
    nodes: model.graph.node.length, external: model.externalLocations,
    inputs: model.inputs, outputs: model.outputs,
    params: model.weights.reduce((a, w) => a + w.numel, 0),
    weights: ws.map((w) => ({
      name: w.name, op: w.op, node: w.node, shape: w.dims, view: [w.view.rows, w.view.cols],
      transposed: w.view.transposed, group: w.group, dtype: w.dtypeName, storage: w.storage, source: w.source,
    })),
    channelGroups: groups.groups.map((g) => ({ id: g.id, channels: g.channels, members: g.members.map((m) => `${m.tensor}:${m.axis}`), prunable: g.prunable, reason: g.reason })),
    // Grouped-query attention seen with query heads as the unit (--channels query:F): per layer, its query heads and KV groups.
    queryHeads: findChannelGroups(model, 'query').groups.filter((g) => g.runs && g.prunable)
      .map((g) => ({ producer: g.producers[0], queryHeads: g.channels, kvGroups: g.runs })),
  };
  if (values.report === '-') return void console.log(JSON.stringify(info, null, 2));
  if (typeof values.report === 'string') writeJson(values.report, info);
  console.log(`${file}: ONNX IR ${info.irVersion}, opsets ${info.opsets.join(' ')}, ${info.nodes} nodes, ${info.params} float parameters, ${fmtBytes(info.bytes)}${info.external.length ? `, external data: ${info.external.join(', ')}` : ''}`);
  console.log(`inputs: ${info.inputs.map((i) => `${i.name}${fmtShape(i.dims)}`).join(' ')}  outputs: ${info.outputs.map((o) => `${o.name}${fmtShape(o.dims)}`).join(' ')}`);
  console.log(`\n${ws.length} prunable weights:`);
  const sub = subgraphNote(model);
  if (sub) console.log(sub);
  console.log(table(ws.map((w) => [w.name, w.op + (w.group > 1 ? ` g${w.group}` : ''), fmtShape(w.dims), `${w.view.rows}x${w.view.cols}${w.view.transposed ? ' (T)' : ''}`, w.dtypeName, w.storage]),
    ['weight', 'op', 'shape', 'view (out x in)', 'dtype', 'storage']));
  const pr = info.channelGroups.filter((g) => g.prunable);
  const kept = info.channelGroups.filter((g) => !g.prunable);
  console.log(`\n${info.channelGroups.length} channel groups: ${pr.length} prunable (${pr.reduce((a, g) => a + g.channels, 0)} channels), ${kept.length} kept whole`);
  for (const g of info.channelGroups) {
    console.log(`  #${g.id} ${g.channels} ch ${g.prunable ? 'prunable' : `kept whole: ${g.reason}`}: ${g.members.slice(0, 6).join(' ')}${g.members.length > 6 ? ` (+${g.members.length - 6})` : ''}`);
  }
  const q = info.queryHeads;
  if (q.length) {
    const shapes = [...new Set(q.map((l) => `${l.queryHeads} query heads over ${l.kvGroups} KV groups`))].join(', ');
    console.log(`
grouped-query attention in ${q.length} layers (${shapes}): --channels F removes whole KV groups with their query heads; --channels query:F removes query heads within each KV group, the same count from each, the K/V heads kept`);
  }
  if (typeof values.report === 'string') console.log(`wrote ${values.report}`);
}
