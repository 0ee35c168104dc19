#!/usr/bin/env node
// The sparsekit-wasm command line. Each command is one file under commands/ over the shared layer
// in cli/ (the options table, one parser, one error path); the work is the module's (prune builds
// one PruneJob and runs it). Work is reported on stderr, results on stdout and, with --report, as
// JSON. Exit codes: 0 done, 1 the model or the run failed, 2 bad usage, 130 interrupted.
import { PROG, UsageError, run } from './cli/errors.js';

/** The commands, loaded on demand. */
const COMMANDS = {
  prune: () => import('./commands/prune.js'),
  inspect: () => import('./commands/inspect.js'),
  sensitivity: () => import('./commands/sensitivity.js'),
  recover: () => import('./commands/recover.js'),
};

/** @param {string[]} argv */
async function main(argv) {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '-h' || cmd === '--help' || cmd === 'help') {
    const summaries = await Promise.all(Object.values(COMMANDS).map(async (load) => (await load()).SUMMARY));
    return void console.log(`Usage: ${PROG} <command> [options]\n\nCommands:\n${summaries.map((s) => `  ${s}`).join('\n')}\n\nRun '${PROG} <command> --help' for a command's options.`);
  }
  if (!Object.hasOwn(COMMANDS, cmd)) throw new UsageError(`unknown command "${cmd}"; see '${PROG} --help'`);
  const load = COMMANDS[/** @type {keyof typeof COMMANDS} */ (cmd)];
  await (await load()).main(rest);
}

run(() => main(process.argv.slice(2)));
