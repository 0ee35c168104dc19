// The one table of channel rules: op type -> rule (rule.ts says what a rule does). An op without a
// rule keeps the channels of its inputs whole, with the reason "… is not handled".
import type { ChannelRule, RuleTable } from '../rule.js';
import { convRules } from './conv.js';
import { gemmRules } from './gemm.js';
import { normRules } from './norm.js';
import { elementwiseRules } from './elementwise.js';
import { layoutRules } from './layout.js';
import { splitConcatRules } from './split-concat.js';
import { reduceRules } from './reduce.js';
import { controlFlowRules } from './control-flow.js';
import { repeatRules } from './repeat.js';

const FAMILIES: RuleTable[] = [convRules, gemmRules, normRules, elementwiseRules, layoutRules, splitConcatRules, reduceRules, controlFlowRules, repeatRules];

function table(): ReadonlyMap<string, ChannelRule> {
  const out = new Map<string, ChannelRule>();
  for (const family of FAMILIES) {
    for (const [op, rule] of Object.entries(family)) {
      // Two families claiming one op would make the outcome depend on the order above.
      if (out.has(op)) throw new Error(`channel rule for ${op} registered twice`);
      out.set(op, rule);
    }
  }
  return out;
}

export const RULES = table();
