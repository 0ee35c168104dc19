// The package's type entry (`types` in package.json) and a plain alias of the browser entry:
// every entry exports the same API (tests/types/entries.ts checks that the Node one matches).
export * from './browser.js';
export { default } from './browser.js';
