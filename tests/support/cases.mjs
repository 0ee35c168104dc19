// The JS side of the one conformance harness, shared by the Node run and both Chromium runs (no
// Node APIs here): the case-file filter, the tensor/number decoder, one infinity-aware `close`,
// the comparison of results with a case's `expect`, and the driver that runs every case of every
// folder through the runner of its op and prints one line per folder plus the closing line
// `conformance: N passed, M failed`. The Rust twin is tests/support/cases.rs.

/** A case file: every `.json` of a `*-cases` folder except its `index.json`. */
export const isCaseFile = (name) => name.endsWith('.json') && name !== 'index.json';

/** A case folder: every directory named `*-cases` under the case root (tests/data). */
export const isCaseFolder = (name) => name.endsWith('-cases');

// ------------------------------------------------------------------ decoding

const NON_FINITE = { nan: NaN, inf: Infinity, infinity: Infinity, '+inf': Infinity, '+infinity': Infinity, '-inf': -Infinity, '-infinity': -Infinity };

/** A JSON scalar as a number: booleans are 0/1; `NaN`, `Infinity`, `-Infinity` (and `inf`) arrive as strings. */
export function num(x) {
  if (typeof x === 'number') return x;
  if (typeof x === 'boolean') return x ? 1 : 0;
  if (typeof x === 'string' && x.toLowerCase() in NON_FINITE) return NON_FINITE[x.toLowerCase()];
  throw new Error(`not a number: ${JSON.stringify(x)}`);
}

export const prod = (s) => s.reduce((a, b) => a * b, 1);
export const sameShape = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
export const isFloat = (t) => t.dtype === undefined || t.dtype.startsWith('float');

/** A float tensor's data as the exact float32 bits of the case. */
export const f32 = (t) => Float32Array.from(t.data, num);

/** A 0/1 tensor (bool or integer) as a Uint8Array. */
export const u8 = (t) => Uint8Array.from(t.data, (v) => (num(v) !== 0 ? 1 : 0));

/** Row-major strides of a contiguous shape. */
export function stridesOf(shape) {
  const st = new Array(shape.length).fill(1);
  for (let d = shape.length - 2; d >= 0; d--) st[d] = st[d + 1] * shape[d + 1];
  return st;
}

/** Storage offsets of every view element, in row-major view order. */
export function viewOffsets(shape, stride) {
  const n = prod(shape);
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    let rem = i;
    let o = 0;
    for (let d = shape.length - 1; d >= 0; d--) {
      o += (rem % shape[d]) * stride[d];
      rem = Math.floor(rem / shape[d]);
    }
    out[i] = o;
  }
  return out;
}

/** A view-ordered array scattered into a zeroed array of `length` (param layout). */
export function scatter(data, length, shape, stride) {
  const out = new Float32Array(length);
  viewOffsets(shape, stride).forEach((o, i) => {
    out[o] = data[i];
  });
  return out;
}

// ------------------------------------------------------------------ comparison

/** The tolerance of expected quantity `key`: one `{rtol, atol}` for all, or one per quantity. */
export function tolOf(c, key) {
  const t = c.tol ?? {};
  const k = t[key] && typeof t[key] === 'object' ? t[key] : t;
  return { rtol: num(k.rtol ?? 0), atol: num(k.atol ?? 0) };
}

export const EXACT = { rtol: 0, atol: 0 };

/**
 * `|got - exp| <= atol + rtol*|exp|`, where infinities must be equal (+Inf == +Inf), -0 == 0, and
 * NaN passes only where the case expects NaN.
 */
export function close(got, exp, tol) {
  if (Number.isNaN(exp)) return Number.isNaN(got);
  if (Number.isNaN(got)) return false;
  if (!Number.isFinite(exp) || !Number.isFinite(got)) return got === exp;
  return Math.abs(got - exp) <= tol.atol + tol.rtol * Math.abs(exp);
}

const isTensor = (x) => x !== null && typeof x === 'object' && !ArrayBuffer.isView(x) && 'data' in x && 'shape' in x;

function flat(x) {
  if (isTensor(x)) return Array.from(x.data);
  if (ArrayBuffer.isView(x)) return Array.from(x);
  if (Array.isArray(x)) return x.flat(Infinity);
  return [x];
}

/**
 * null when `got` matches the expectation `exp`, else a description of the first difference.
 * A tensor expectation takes a typed array or `{shape, data}` of its length (its shape too when
 * given); non-float dtypes compare exactly; booleans match 0/1; float32 expectations
 * are rounded to float32 first.
 */
export function compare(key, got, exp, tol) {
  if (isTensor(exp)) {
    if (isTensor(got) && !sameShape(got.shape, exp.shape)) return `${key}: shape ${JSON.stringify(got.shape)}, expected ${JSON.stringify(exp.shape)}`;
    const g = flat(got);
    if (g.length !== prod(exp.shape)) return `${key}: ${g.length} elements, expected shape ${JSON.stringify(exp.shape)}`;
    const float = isFloat(exp);
    const t = float ? tol : EXACT;
    const e = exp.data.map((v) => (float ? Math.fround(num(v)) : num(v)));
    const bad = [];
    for (let i = 0; i < e.length; i++) if (!close(num(g[i]), e[i], t)) bad.push(i);
    if (bad.length === 0) return null;
    const i = bad[0];
    return `${key}[${i}]: got ${g[i]}, expected ${e[i]} (${bad.length} of ${e.length} elements differ)`;
  }
  if (Array.isArray(exp)) {
    if (!Array.isArray(got) && !ArrayBuffer.isView(got)) return `${key}: got ${got}, expected a list`;
    if (got.length !== exp.length) return `${key}: ${got.length} entries, expected ${exp.length}`;
    for (let i = 0; i < exp.length; i++) {
      const d = compare(`${key}[${i}]`, got[i], exp[i], tol);
      if (d) return d;
    }
    return null;
  }
  if (typeof exp === 'boolean') return Number(got) === Number(exp) ? null : `${key}: got ${got}, expected ${exp}`;
  if (typeof exp === 'number' || (typeof exp === 'string' && exp.toLowerCase() in NON_FINITE)) {
    const e = num(exp);
    return close(num(got), e, tol) ? null : `${key}: got ${got}, expected ${e}`;
  }
  return JSON.stringify(got) === JSON.stringify(exp) ? null : `${key}: got ${JSON.stringify(got)}, expected ${JSON.stringify(exp)}`;
}

/** null when every expected key of a successful case matches `got`, else the first difference. */
export function checkExpect(c, got) {
  for (const [key, exp] of Object.entries(c.expect)) {
    if (!(key in got)) return `missing result ${key}`;
    const d = compare(key, got[key], exp, tolOf(c, key));
    if (d) return d;
  }
  return null;
}

// ------------------------------------------------------------------ discovery and the driver

/**
 * Every case folder with its cases, through `io`: `folders()` (names under the case root),
 * `files(folder)` (names in it) and `read(folder, file)` (parsed JSON). The filter is applied
 * here, so the Node run and the browser runs (whose page gets the listing from Node) agree.
 * A folder whose index.json does not list exactly its case files is reported as a failure.
 */
export async function loadCaseFolders(io) {
  const out = [];
  for (const name of (await io.folders()).filter(isCaseFolder).sort()) {
    const files = (await io.files(name)).filter(isCaseFile).sort();
    const cases = await Promise.all(files.map((f) => io.read(name, f)));
    const index = await io.read(name, 'index.json');
    const listed = index.map((e) => `${e.id}.json`).sort();
    const problems = JSON.stringify(listed) === JSON.stringify(files) ? [] : [`${name}/index.json does not list exactly the ${files.length} case files`];
    out.push({ name, cases, problems });
  }
  return out;
}

/**
 * Runs every case of every folder through the first runner whose `handles(op)` is true (an op no
 * runner handles is a failure). A runner's `run(sk, case)` returns (or resolves to) null for a
 * pass, else the failure text. Returns {lines, passed, failed, failures}.
 */
export async function runFolders(sk, folders, runners) {
  const lines = [];
  const failures = [];
  let passed = 0;
  let failed = 0;
  for (const { name, cases, problems } of folders) {
    let p = 0;
    let f = problems.length;
    failures.push(...problems);
    for (const c of cases) {
      const runner = runners.find((r) => r.handles(c.op));
      let err;
      try {
        err = runner ? await runner.run(sk, c) : `no runner knows op ${c.op}`;
      } catch (e) {
        err = `runner threw: ${(e && e.stack) || e}`;
      }
      if (err) {
        f++;
        failures.push(`${name}/${c.id}: ${err}`);
      } else p++;
    }
    lines.push(`${name}: ${p} passed, ${f} failed, of ${cases.length} cases`);
    passed += p;
    failed += f;
  }
  lines.push(`conformance: ${passed} passed, ${failed} failed`);
  return { lines, passed, failed, failures };
}
