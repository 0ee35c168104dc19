// The channel analysis and removal live in channels/ (one file per concept, per-op rules in
// channels/rules/); this module keeps the import path the CLI and older callers use.
export * from './channels/index.js';
