// Shared helpers of the package tests: packing the built package, a static server with optional
// cross-origin isolation headers, and headless Chromium through playwright-core.
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, extname, resolve, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const PKG = join(ROOT, 'pkg');

// These tests exercise the built package: without it they fail here (never skip).
for (const f of ['package.json', 'src/index.d.ts', 'dist/index.cjs', 'wasm/st/sparsekit_wasm_bg.wasm', 'wasm/mt/sparsekit_wasm_bg.wasm']) {
  if (!existsSync(join(PKG, f))) throw new Error(`pkg/${f} is missing: build the package first (bash scripts/build.sh)`);
}

export { serve, launch, CHROMIUM_ARGS } from '../../kit/browser.mjs';

/** `npm pack` of pkg/ into a fresh temp dir; returns the tarball path. */
export function packPackage() {
  const out = mkdtempSync(join(tmpdir(), 'sk-pack-'));
  const name = execFileSync('npm', ['pack', PKG, '--pack-destination', out, '--silent'], { encoding: 'utf8' }).trim().split('\n').pop();
  return join(out, name);
}

/** A temp project with `files` written and the tarball installed (its one dependency, protobufjs, from the npm cache when it is there). */
export function projectWith(tarball, files, prefix = 'sk-app-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [name, text] of Object.entries(files)) {
    execFileSync('mkdir', ['-p', join(dir, name, '..')]);
    writeFile(join(dir, name), text);
  }
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: dir, stdio: 'pipe' });
  return dir;
}

import { writeFileSync } from 'node:fs';
function writeFile(p, t) {
  writeFileSync(p, t);
}

/**
 * The same small pruning job everywhere (Node CJS/ESM, Vite app, threaded page), so that all
 * report identical numbers: a deterministic 64x96 weight, 50% of 4x4 blocks kept per row of
 * blocks, then the block norms' sum and the non-zero count.
 */
export const JOB_SOURCE = `
function job(sk) {
  const rows = 64, cols = 96;
  const w = new Float32Array(rows * cols);
  let s = 12345;
  for (let i = 0; i < w.length; i++) { s = (s * 1103515245 + 12345) >>> 0; w[i] = (s / 4294967296) * 2 - 1; }
  const p = sk.Param.fromArray(w, [rows, cols]);
  const b = new sk.BlockSpec(p, [4, 4]);
  const normsBefore = Array.from(b.norms()).reduce((a, x) => a + x, 0);
  new sk.ScopeSpec(b, [1, -1]).hardThreshold({ sparsity: 0.5 });
  const out = p.toArray();
  const nnz = out.reduce((a, x) => a + (x !== 0 ? 1 : 0), 0);
  const mask = sk.createAspMask(w, [rows, cols], 'm4n2_1d');
  const kept24 = mask.reduce((a, x) => a + x, 0);
  let checksum = 0;
  for (let i = 0; i < out.length; i++) checksum += out[i] * ((i % 7) + 1);
  p.free();
  return { normsBefore: Number(normsBefore.toFixed(4)), nnz, kept24, checksum: Number(checksum.toFixed(4)) };
}
`;

/** The expected numbers of JOB_SOURCE, computed independently in plain JS. */
export function expectedJob() {
  const rows = 64, cols = 96;
  const w = new Float32Array(rows * cols);
  let s = 12345;
  for (let i = 0; i < w.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    w[i] = (s / 4294967296) * 2 - 1;
  }
  const norm = (r0, c0) => {
    let a = 0;
    for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) a += w[(r0 + r) * cols + c0 + c] ** 2;
    return Math.sqrt(a);
  };
  let normsBefore = 0;
  const out = Float32Array.from(w);
  for (let br = 0; br < rows / 4; br++) {
    const n = [];
    for (let bc = 0; bc < cols / 4; bc++) n.push([norm(br * 4, bc * 4), bc]);
    normsBefore += n.reduce((a, [x]) => a + x, 0);
    n.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    for (const [, bc] of n.slice(Math.floor(0.5 * n.length + 0.5))) {
      for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) out[(br * 4 + r) * cols + bc * 4 + c] = 0;
    }
  }
  const nnz = out.reduce((a, x) => a + (x !== 0 ? 1 : 0), 0);
  let checksum = 0;
  for (let i = 0; i < out.length; i++) checksum += out[i] * ((i % 7) + 1);
  return { normsBefore, nnz, kept24: (rows * cols) / 2, checksum };
}
