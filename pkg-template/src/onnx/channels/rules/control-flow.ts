// Subgraphs. An If's branches are walked like the main graph (their weights form groups of their
// own, outer values read inside keep their channels), and output k carries channels when both
// branches give the same ones there (tied). Loop and Scan bodies are walked for the groups inside;
// what crosses their boundary per iteration (carried state, scanned values) keeps its channels.
import { subgraphsOf } from '../constants.js';
import { sameLayout, type Track } from '../track.js';
import type { RuleContext, RuleTable } from '../rule.js';

function ifRule(ctx: RuleContext) {
  const { node, name } = ctx;
  const branches = subgraphsOf(node);
  const thenBranch = branches.find((b) => b.name === 'then_branch'), elseBranch = branches.find((b) => b.name === 'else_branch');
  if (!thenBranch || !elseBranch) { ctx.blockInputs(`If ${name} without both branches`); return; }
  ctx.block(ctx.inputs[0], `If ${name} reads it as its condition`);
  const a = ctx.walkSubgraph(thenBranch.graph), b = ctx.walkSubgraph(elseBranch.graph);
  node.output.forEach((_: string, k: number) => {
    const ta = a[k], tb = b[k];
    if (!ta && !tb) return;
    if (ta && tb && !ta.flat && !tb.flat && sameLayout(ta, tb)) {
      ctx.tie(ta.ids, tb.ids);
      const rank = ta.rank === tb.rank ? ta.rank : undefined;
      const axis = rank === undefined && ta.axis >= 0 ? (ta.axis === tb.axis ? ta.axis : NaN) : ta.axis;
      if (Number.isNaN(axis)) { ctx.block(ta, `If ${name}: its branches give the channels on different axes`); return; }
      ctx.setOutput(k, { ...ta, axis, rank, value: (c) => { const x = ta.value?.(c), y = tb.value?.(c); return x !== undefined && x === y ? x : undefined; } });
      return;
    }
    const why = `If ${name}: its branches give different channels for output ${k}`;
    ctx.block(ta, why);
    ctx.block(tb, why);
  });
}

function loopRule(ctx: RuleContext) {
  const { node, name, op } = ctx;
  // Loop inputs (M, cond, carried...), Scan inputs (state..., scanned...): none is followed inside.
  ctx.blockInputs(`${op} ${name} carries it through its iterations`);
  for (const { graph } of subgraphsOf(node)) {
    const bound = new Map<string, Track | undefined>(graph.input.map((i: { name: string }) => [i.name, undefined]));
    const outs = ctx.walkSubgraph(graph, bound);
    outs.forEach((t) => ctx.block(t, `it leaves the body of ${op} ${name}`));
  }
}

export const controlFlowRules: RuleTable = { If: ifRule, Loop: loopRule, Scan: loopRule };
