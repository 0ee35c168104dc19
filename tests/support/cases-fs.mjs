// Node's access to the case folders for `loadCaseFolders` (tests/support/cases.mjs): the shared
// testdata next to the repo. The Chromium runs get the same listing from here.
import { readFileSync, readdirSync, statSync } from 'node:fs';

export const TESTDATA = new URL('../../../shared/testdata/', import.meta.url);

export const fsCaseIO = {
  folders: () => readdirSync(TESTDATA).filter((n) => statSync(new URL(n, TESTDATA)).isDirectory()),
  files: (folder) => readdirSync(new URL(`${folder}/`, TESTDATA)),
  read: (folder, file) => JSON.parse(readFileSync(new URL(`${folder}/${file}`, TESTDATA), 'utf8')),
};
