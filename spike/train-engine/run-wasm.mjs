// Times one training step of each engine's wasm build (out/ours.wasm, out/candle.wasm) in
// Node, interleaved, median of REPS steps after 2 warm-up steps. Usage: node run-wasm.mjs [REPS]
import { readFileSync, existsSync } from 'node:fs';

const reps = Number(process.argv[2] ?? 15);
async function load(name) {
  const path = new URL(`./out/${name}.wasm`, import.meta.url);
  if (!existsSync(path)) return null;
  const mod = await WebAssembly.compile(readFileSync(path));
  const imports = {};
  for (const imp of WebAssembly.Module.imports(mod)) {
    imports[imp.module] ??= {};
    imports[imp.module][imp.name] = () => { throw new Error(`import ${imp.module}.${imp.name} called`); };
  }
  const { exports } = await WebAssembly.instantiate(mod, imports);
  exports.setup();
  return { name, step: exports[`step_${name}`], flops: exports.step_flops() };
}
const engines = (await Promise.all(['ours', 'candle'].map(load))).filter(Boolean);
const times = Object.fromEntries(engines.map((e) => [e.name, []]));
for (let r = 0; r < reps + 2; r++) {
  for (const e of engines) {
    const t = performance.now();
    const loss = e.step();
    const dt = performance.now() - t;
    if (r === 0) console.log(`${e.name}: loss ${loss}`);
    if (r >= 2) times[e.name].push(dt);
  }
}
for (const e of engines) {
  const t = times[e.name].sort((a, b) => a - b);
  const med = t[t.length >> 1];
  console.log(`${e.name.padEnd(6)} wasm step: median ${med.toFixed(2)} ms (min ${t[0].toFixed(2)}, max ${t.at(-1).toFixed(2)}, ${t.length} reps) = ${(e.flops / med / 1e6).toFixed(2)} GFLOP/s`);
}
