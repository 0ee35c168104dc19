// Share of the conv output channels in removable channel groups on the models of tests/data/models (generated ones and
// the real ultralytics / transformers exports), for this package and, when SPARSEKIT_BASE points at another built package
// (e.g. main's pkg/ before the rule folder), for that one too. Usage:
//   SPARSEKIT_BASE=/work/main/pkg node bench/channels/channels-coverage.mjs
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { modelBytes } from '../../kit/test-models.mjs';
import { convCoverage } from '../../kit/coverage.mjs';

const packages = [['this package', 'sparsekit-wasm/onnx']];
if (process.env.SPARSEKIT_BASE) packages.unshift(['base', pathToFileURL(path.join(process.env.SPARSEKIT_BASE, 'src/onnx/index.js')).href]);
for (const name of ['yolov8-style', 'yolov8n-ultralytics', 'bert-style', 'bert-torch', 'bert-torch-static', 'if-branches']) {
  for (const [label, spec] of packages) {
    const O = await import(spec);
    const m = O.OnnxModel.parse(modelBytes(name));
    const a = O.findChannelGroups(m);
    const cov = convCoverage(m, a);
    const prunable = a.groups.filter((g) => g.prunable);
    const reasons = new Map();
    for (const g of a.groups) {
      if (g.prunable) continue;
      const key = g.reason.replace(/"[^"]*"/g, '"…"').replace(/ \S+_\d+\b/g, ' …');
      reasons.set(key, (reasons.get(key) ?? 0) + g.channels);
    }
    const convs = cov.total ? `conv channels removable ${cov.removable}/${cov.total} = ${(100 * cov.fraction).toFixed(1)}%` : 'no Conv';
    console.log(`${name} [${label}]: ${a.groups.length} groups, ${prunable.length} prunable (${prunable.reduce((s, g) => s + g.channels, 0)} units); ${convs}`);
    for (const [r, c] of [...reasons].sort((x, y) => y[1] - x[1]).slice(0, 5)) console.log(`    kept: ${c} units: ${r}`);
  }
}
