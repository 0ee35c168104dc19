// Bench: the turn of the event loop that loops over samples give between two runs (calib/cancel.ts
// `turn`) against the setTimeout(0) they gave before, in Node: ms per turn over N turns, alternated
// in rounds. setTimeout(0) waits at least 1 ms in Node (and 4 ms in a page once nested).
//   node bench/calib/turn.mjs [--turns 2000] [--rounds 3]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { turn } from '#onnx-internal';

const { values } = parseArgs({ options: { turns: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } } });
const n = Number(values.turns), rounds = Number(values.rounds);
const timeout = () => new Promise((resolve) => { setTimeout(resolve, 0); });
const ways = { 'setTimeout(0)': timeout, 'turn()': turn };
const ms = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  for (const [name, f] of Object.entries(ways)) {
    const t = performance.now();
    for (let i = 0; i < n; i++) await f();
    ms[name].push((performance.now() - t) / n);
  }
}
for (const [name, v] of Object.entries(ms)) console.log(`${name}: ${v.map((x) => x.toFixed(4)).join(', ')} ms per turn`);
console.log(`${n} turns per round, ${rounds} rounds alternated; Node ${process.version}; load ${os.loadavg()[0].toFixed(2)}`);
