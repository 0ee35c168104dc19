// The hostile corpus (tests/data/hostile) in the playground, in headless Chromium: every file the
// reader refuses shows a typed error on the page (the message names what is wrong), the page never
// throws, and it stays usable: a good model loaded afterwards lists its layers with no error.
// Written against what the page shows (the file input, the error element, the layers table), not
// against its code.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CLS, ROOT, startPlayground, openPerLayer } from './helpers.mjs';

const DIR = path.join(ROOT, 'tests/data/hostile');
const CASES = JSON.parse(fs.readFileSync(path.join(DIR, 'cases.json'), 'utf8'));

/** What the message of each reason says (the reader's own words, see pkg-template/src/onnx). */
const SAYS = {
  not_onnx: /not an ONNX model|empty|not .*ONNX/i,
  truncated: /truncated|ends inside|remain/i,
  corrupt: /not a valid ONNX protobuf|op type|varint|wire type|UTF-8/i,
  too_deep: /nested/i,
  too_large: /objects/i,
  bad_dtype: /data type/i,
  bad_dims: /dimension|2\^53|elements/i,
  size_mismatch: /should hold|values in|holds no data|declares/i,
  bad_external: /external data/i,
  dangling_input: /defines|never produced/i,
  duplicate_name: /writes|twice|two initializers/i,
  cycle: /cycle|its own output/i,
  bad_attribute: /group/i,
  bad_node: /inputs .* requires/i,
};

let playground;
before(async () => { playground = await startPlayground(); });
after(async () => { await playground?.stop(); });

test('every hostile file shows a typed error on the page, and the page stays usable', async () => {
  const { context, page, problems } = await playground.openPage();
  await openPerLayer(page);
  const shown = [];
  // Files the page reads with its default limits; the limit-only cases are valid or corrupt there.
  const refused = CASES.filter((c) => (c.limits ? c.expectDefault : c.expect) !== 'ok');
  for (const c of refused) {
    const reason = c.limits ? c.expectDefault : c.expect;
    const file = path.join(DIR, c.file);
    const data = `${file}.data`;
    await page.getByTestId('model-file').setInputFiles(fs.existsSync(data) ? [file, data] : [file]);
    const error = page.getByTestId('error');
    await error.waitFor({ timeout: 20_000 });
    const text = (await error.textContent()) ?? '';
    shown.push(`${c.file}: ${text.trim().slice(0, 160)}`);
    assert.match(text, SAYS[reason], `${c.file} (${reason}) shows: ${text}`);
    // The next file starts from a good model, so that an error left over cannot pass for a new one.
    await page.getByTestId('model-file').setInputFiles(CLS);
    await page.waitForSelector('#layers tbody tr', { timeout: 60_000 });
    assert.equal(await page.getByTestId('error').count(), 0, `a good model after ${c.file} clears the error`);
  }
  const valid = path.join(DIR, 'valid-base.onnx');
  await page.getByTestId('model-file').setInputFiles(valid);
  await page.waitForSelector('#layers tbody tr', { timeout: 60_000 });
  assert.equal(await page.getByTestId('error').count(), 0);
  assert.deepEqual(problems.filter((p) => p.startsWith('pageerror')), [], 'no uncaught exception in the page');
  console.log(`# hostile playground: ${refused.length} files refused on the page, e.g.\n#   ${shown.slice(0, 4).join('\n#   ')}`);
  await context.close();
});
