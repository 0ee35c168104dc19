// MiniLM's labelled task, shared by bench/text/minilm-recover.mjs and bench/quant/minilm.mjs:
// Debian package short descriptions labelled by their archive Section, scored by kNN (k = 10,
// cosine) of held-out descriptions against a labelled reference set.
// Text: /var/lib/apt/lists/*bookworm_main_binary-amd64_Packages.lz4 (needs `lz4`); the short
// descriptions only (the lists hold no long ones). The held-out set, the reference set, the
// validation set and the calibration / training set are disjoint sets of distinct descriptions,
// in a fixed pseudo-random order (by hash), so they are the same on every run and machine with
// these lists.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const LISTS = '/var/lib/apt/lists';

/**
 * The sets: `sections` the most frequent ones, `ref` / `held` ([description, section] pairs,
 * `nRef` / `nEval` per section), `valLines`, `trainLines` (`nTrain`, at least `nCal`) and
 * `calLines` (the first `nCal` of the training lines), `distinct` the count of descriptions read.
 */
export function debianSections({ nSections = 8, nRef = 60, nEval = 40, nVal = 128, nCal = 512, nTrain = nCal } = {}) {
  const list = fs.readdirSync(LISTS).find((f) => /bookworm_main_binary-amd64_Packages\.lz4$/.test(f));
  if (!list) throw new Error(`no bookworm main amd64 Packages.lz4 in ${LISTS} (apt-get update)`);
  const raw = execFileSync('lz4', ['-dc', path.join(LISTS, list)], { maxBuffer: 1 << 30 }).toString('utf8');
  const sectionsOf = new Map(); // description -> Set of sections
  for (const stanza of raw.split('\n\n')) {
    const d = /^Description: (.+)$/m.exec(stanza)?.[1]?.trim();
    const s = /^Section: (.+)$/m.exec(stanza)?.[1]?.trim();
    if (!d || !s) continue;
    if (!sectionsOf.has(d)) sectionsOf.set(d, new Set());
    sectionsOf.get(d).add(s);
  }
  // A description under two sections has no single label: out of the labelled sets, still usable for training.
  const labelled = [...sectionsOf].filter(([, s]) => s.size === 1).map(([d, s]) => [d, [...s][0]]);
  const key = (d) => crypto.createHash('sha1').update(d).digest('hex');
  labelled.sort((a, b) => (key(a[0]) < key(b[0]) ? -1 : 1));
  const counts = new Map();
  for (const [, s] of labelled) counts.set(s, (counts.get(s) ?? 0) + 1);
  const sections = [...counts].sort((a, b) => b[1] - a[1]).slice(0, nSections).map(([s]) => s);
  const ref = [], held = [], used = new Set();
  for (const s of sections) {
    const of = labelled.filter(([, x]) => x === s);
    ref.push(...of.slice(0, nRef)); held.push(...of.slice(nRef, nRef + nEval));
    for (const [d] of of.slice(0, nRef + nEval)) used.add(d);
  }
  const rest = [...sectionsOf.keys()].filter((d) => !used.has(d)).sort((a, b) => (key(a) < key(b) ? -1 : 1));
  const train = Math.max(nCal, nTrain);
  const valLines = rest.slice(0, nVal), trainLines = rest.slice(nVal, nVal + train), calLines = trainLines.slice(0, nCal);
  return { sections, ref, held, valLines, trainLines, calLines, distinct: sectionsOf.size };
}

const unit = (v) => { let n = 0; for (const x of v) n += x * x; n = Math.sqrt(n) || 1; return Float64Array.from(v, (x) => x / n); };

/**
 * kNN (k = 10, cosine) accuracy of the held-out embeddings' sections against the reference
 * embeddings: `refOut` / `heldOut` are per-sample output maps, `output` the embedding's name,
 * `ref` / `held` the [description, section] pairs in the same order.
 */
export function knnAccuracy(refOut, heldOut, ref, held, output = 'sentence_embedding') {
  const R = refOut.map((o) => unit(o[output])), H = heldOut.map((o) => unit(o[output]));
  let right = 0;
  H.forEach((h, i) => {
    const sims = R.map((r, j) => { let s = 0; for (let c = 0; c < r.length; c++) s += r[c] * h[c]; return [s, j]; }).sort((a, b) => b[0] - a[0]).slice(0, 10);
    // Majority of the 10 labels; a tie goes to the label with the larger summed similarity.
    const votes = new Map();
    for (const [s, j] of sims) { const l = ref[j][1]; const v = votes.get(l) ?? [0, 0]; votes.set(l, [v[0] + 1, v[1] + s]); }
    const best = [...votes].sort((a, b) => b[1][0] - a[1][0] || b[1][1] - a[1][1])[0][0];
    if (best === held[i][1]) right++;
  });
  return right / H.length;
}
