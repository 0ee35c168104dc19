// Node's access to the case folders for `loadCaseFolders` (tests/support/cases.mjs): the cases under
// tests/data, or the folder `SPARSEKIT_TESTDATA` names (the same layout: how the cases kept outside
// the repository run against the package). The Chromium runs get the same listing from here.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const override = process.env.SPARSEKIT_TESTDATA;
export const TESTDATA = override ? pathToFileURL(override.endsWith('/') ? override : `${override}/`) : new URL('../data/', import.meta.url);

export const fsCaseIO = {
  folders: () => readdirSync(TESTDATA).filter((n) => statSync(new URL(n, TESTDATA)).isDirectory()),
  files: (folder) => readdirSync(new URL(`${folder}/`, TESTDATA)),
  read: (folder, file) => JSON.parse(readFileSync(new URL(`${folder}/${file}`, TESTDATA), 'utf8')),
};
