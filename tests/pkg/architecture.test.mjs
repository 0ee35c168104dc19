// docs/ARCHITECTURE.md stays true: every folder of the project is described there, and the import
// directions its "Directions" table states hold in the code (Rust `crate::` paths in src/,
// relative imports in the ONNX module, package imports in the CLI and the playground, and no import
// between bench/ and tests/). Reads sources only: no build needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = fs.readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

/** The Directions table: folder -> the folders (or `root`) its files may import. */
function directions() {
  const block = /<!-- directions -->([\s\S]*?)<!-- \/directions -->/.exec(DOC);
  assert.ok(block, 'docs/ARCHITECTURE.md has a <!-- directions --> table');
  const rules = new Map();
  for (const line of block[1].split('\n')) {
    const m = /^\|\s*`([^`]+)`\s*\|\s*(.*?)\s*\|/.exec(line);
    if (!m) continue;
    rules.set(m[1], m[2] === '—' ? [] : [...m[2].matchAll(/`([^`]+)`/g)].map((x) => x[1]));
  }
  return rules;
}

test('every folder of the project is described in docs/ARCHITECTURE.md', () => {
  const folders = new Set();
  for (const f of tracked) {
    const parts = f.split('/');
    // top-level folders, and the folders of the code layers (src, the package, the CLI, the
    // playground, tests, bench) one level down
    if (parts.length > 1 && !parts[0].startsWith('.')) folders.add(`${parts[0]}/`);
    const deep = ['src', 'pkg-template/src/onnx', 'pkg-template/bin', 'www/src', 'tests', 'bench'];
    for (const d of deep) {
      const rest = f.startsWith(`${d}/`) ? f.slice(d.length + 1).split('/') : null;
      if (rest && rest.length > 1) folders.add(`${d}/${rest[0]}/`);
    }
  }
  const missing = [...folders].filter((d) => !DOC.includes(`\`${d}\``) && !(d.startsWith('tests/data/') || d === 'fuzz/corpus/'));
  assert.deepEqual(missing, [], `folders not in docs/ARCHITECTURE.md: ${missing.join(' ')}`);
});

/** The imports of a file: Rust crate paths, or JS/TS import specifiers. */
function importsOf(file) {
  const s = fs.readFileSync(path.join(ROOT, file), 'utf8');
  if (file.endsWith('.rs')) return [...new Set([...s.matchAll(/\bcrate::([a-z_]+)/g)].map((m) => m[1]))];
  const specs = [...s.matchAll(/(?:^|\n)\s*(?:import|export)[^'"\n;]*?from\s*['"]([^'"]+)['"]/g), ...s.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)];
  return [...new Set(specs.map((m) => m[1]))];
}

/** The folder (a key of the table) a repository path belongs to, the longest match. */
const folderOf = (rules, p) => [...rules.keys()].filter((k) => p.startsWith(k)).sort((a, b) => b.length - a.length)[0];

test('the import directions of docs/ARCHITECTURE.md hold in the code', () => {
  const rules = directions();
  assert.ok(rules.size >= 10, 'the table lists the layers');
  const bad = [];
  for (const file of tracked.filter((f) => /\.(rs|ts|js|mjs)$/.test(f))) {
    const from = folderOf(rules, file);
    if (!from) continue;
    const allowed = rules.get(from);
    for (const spec of importsOf(file)) {
      let target;
      if (file.endsWith('.rs')) {
        if (!file.startsWith('src/')) continue;
        if (spec === 'bail') continue; // the error macro of core
        target = `src/${spec}/`;
      } else if (spec.startsWith('.')) {
        target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      } else if (spec.startsWith('#') || spec.startsWith('sparsekit-wasm')) {
        target = spec;
      } else continue; // node: builtins and third-party packages
      // Names that are not folders: a package entry ('sparsekit-wasm', 'sparsekit-wasm/onnx'), the
      // workspace's alias of the ONNX module's internal entry, the wasm-bindgen output that the
      // build links beside the package's sources.
      const to = spec.startsWith('sparsekit-wasm') ? spec
        : spec === '#onnx-internal' ? 'pkg-template/src/onnx/internal'
          : target.startsWith('pkg-template/wasm/') ? 'wasm/'
            : folderOf(rules, target) ?? target;
      if (to === from) continue;
      if (!allowed.includes(to)) bad.push(`${file} -> ${spec} (${to})`);
    }
  }
  assert.deepEqual(bad, [], `imports against docs/ARCHITECTURE.md's directions:\n${bad.join('\n')}`);
});
