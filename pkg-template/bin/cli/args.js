// Parsing and help, both from the options table: one parser for every command (node:util parseArgs,
// strict), and the help of a command generated from the flags it takes.
import { parseArgs } from 'node:util';
import { OPTIONS } from './options.js';
import { PROG, UsageError } from './errors.js';

/** @typedef {import('./errors.js').Thrown} Thrown */

/**
 * The flags of `command`, parsed; values are strings (booleans for switches, arrays for repeatable ones).
 * @param {string} command
 * @param {string[]} argv
 * @returns {{ values: Record<string, string | boolean | string[] | undefined>, positionals: string[] }}
 */
export function parse(command, argv) {
  /** @type {NonNullable<import('node:util').ParseArgsConfig['options']>} */
  const options = {};
  for (const o of OPTIONS) {
    if (!o.commands.includes(command)) continue;
    options[o.flag] = { type: o.value ? 'string' : 'boolean', ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  }
  try {
    const r = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    // strings for options with a value, booleans for switches, string arrays for repeatable ones (the table says which)
    return { values: /** @type {Record<string, string | boolean | string[] | undefined>} */ (/** @type {unknown} */ (r.values)), positionals: r.positionals };
  } catch (e) {
    const first = String(/** @type {Thrown} */ (e).message).split('\n')[0].replace(/\. To specify a positional.*$/, '');
    throw new UsageError(/ambiguous/.test(first) ? `${first} (a value starting with '-' is written --option=VALUE)` : `${first}; see '${PROG} ${command} --help'`);
  }
}

/**
 * A command's help: its usage and description, then its flags from the table.
 * @param {string} command
 * @param {string} usage
 */
export function help(command, usage) {
  const rows = OPTIONS.filter((o) => o.commands.includes(command)).map((o) => [`${o.short ? `-${o.short}, ` : ''}--${o.flag}${o.value ? ` ${o.value}` : ''}`, o.help]);
  const w = Math.min(30, Math.max(...rows.map((r) => r[0].length)));
  const wrap = (/** @type {string} */ text) => {
    const out = [''];
    for (const word of text.split(' ')) {
      if (out[out.length - 1].length + word.length + 1 > 100 - w - 4 && out[out.length - 1]) out.push('');
      out[out.length - 1] += (out[out.length - 1] ? ' ' : '') + word;
    }
    return out;
  };
  const lines = rows.map(([flag, text]) => {
    const body = wrap(text);
    const head = flag.length > w ? [`  ${flag}`, `  ${''.padEnd(w)}  ${body[0]}`] : [`  ${flag.padEnd(w)}  ${body[0]}`];
    return [...head, ...body.slice(1).map((b) => `  ${''.padEnd(w)}  ${b}`)].join('\n');
  });
  return `${usage}\n\n${lines.join('\n')}`;
}

/** @param {string} flag @param {unknown} s */
export function num(flag, s) {
  const x = Number(s);
  if (typeof s !== 'string' || s === '' || !Number.isFinite(x)) throw new UsageError(`--${flag} needs a number (got "${s}")`);
  return x;
}

/** @param {string} flag @param {unknown} s */
export function posInt(flag, s) {
  const x = Number(s);
  if (typeof s !== 'string' || !Number.isInteger(x) || x < 1) throw new UsageError(`--${flag} needs a positive integer (got "${s}")`);
  return x;
}

/** "0.25,0.5" -> [0.25, 0.5]. @param {string} flag @param {unknown} s */
export function numList(flag, s) {
  const xs = String(s).split(',').map((x) => x.trim()).filter(Boolean).map(Number);
  if (!xs.length || xs.some((x) => !Number.isFinite(x))) throw new UsageError(`--${flag} needs a comma-separated list of numbers (got "${s}")`);
  return xs;
}

/** "4x4" -> [4, 4]. @param {string} flag @param {unknown} s @returns {[number, number]} */
export function blockShape(flag, s) {
  const m = /^(\d+)x(\d+)$/.exec(String(s));
  if (!m || +m[1] < 1 || +m[2] < 1) throw new UsageError(`--${flag} must be RxC with positive integers, e.g. 4x4 (got "${s}")`);
  return [+m[1], +m[2]];
}

/** Exactly one positional: the input model. @param {string[]} positionals @param {string} command @param {string} what */
export function oneFile(positionals, command, what = 'input model') {
  if (positionals.length !== 1) throw new UsageError(`${command} takes exactly one ${what} (got ${positionals.length}); see '${PROG} ${command} --help'`);
  return positionals[0];
}
