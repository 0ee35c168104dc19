// Real English lines that ship with a Debian machine, for the tokenizer check (bench/text/
// check-tokenizers.mjs) and the committed fixture of tests/onnx/tokenizers.test.mjs: package
// descriptions from the apt lists (`apt-get update` fills /var/lib/apt/lists; the lists may be lz4-
// or gzip-compressed: apt-helper cat-file reads any of them) and the lines of the licenses in
// /usr/share/common-licenses. Deterministic: evenly spaced picks from sorted, de-duplicated lines.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const LISTS = '/var/lib/apt/lists';
const LICENSES = '/usr/share/common-licenses';

/** Short descriptions of the packages in the apt lists (sorted, unique). */
export function packageDescriptions() {
  let files = [];
  try { files = fs.readdirSync(LISTS).filter((f) => /_Packages(\.(lz4|gz|xz))?$/.test(f)).map((f) => path.join(LISTS, f)); } catch { return []; }
  const out = new Set();
  for (const f of files) {
    const text = execFileSync('/usr/lib/apt/apt-helper', ['cat-file', f], { maxBuffer: 1 << 30 }).toString('utf8');
    for (const m of text.matchAll(/^Description(?:-en)?: (.+)$/gm)) out.add(m[1].trim());
  }
  return [...out].sort();
}

/** Non-empty lines of the common licenses (sorted by file, in file order, unique). */
export function licenseLines() {
  let files = [];
  try { files = fs.readdirSync(LICENSES).sort().map((f) => path.join(LICENSES, f)).filter((f) => fs.statSync(f).isFile()); } catch { return []; }
  const seen = new Set(), out = [];
  for (const f of files) {
    for (const l of fs.readFileSync(f, 'utf8').split('\n')) {
      const s = l.trim();
      if (s.length >= 20 && !seen.has(s)) { seen.add(s); out.push(s); }
    }
  }
  return out;
}

const spaced = (xs, n) => (xs.length <= n ? xs : Array.from({ length: n }, (_, i) => xs[Math.floor((i * xs.length) / n)]));

/** `n` lines: 70% package descriptions, 30% license lines (all licenses when the lists are missing). */
export function realLines(n = 1000) {
  const desc = packageDescriptions();
  const lic = licenseLines();
  const nd = desc.length ? Math.min(desc.length, Math.round(n * 0.7)) : 0;
  const lines = [...spaced(desc, nd), ...spaced(lic, n - nd)];
  if (lines.length < n) throw new Error(`only ${lines.length} lines of real text found (run apt-get update for the package lists)`);
  return lines;
}
