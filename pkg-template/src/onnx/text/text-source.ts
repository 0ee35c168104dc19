// Text as a user has it: a plain .txt file, or .jsonl with one {"text": ...} record per line (the
// layout of C4 / the datasets' JSON Lines exports). Read into records (an encoder's samples) and one
// running text (a decoder's, cut into windows).
import { OnnxError } from '../errors.js';

export type TextFormat = 'txt' | 'jsonl';

/** The text of one source, both ways it is sampled. */
export interface TextRecords {
  /** Non-empty lines of a .txt, or the `text` of each .jsonl record: one encoder sample each. */
  records: string[];
  /**
   * The running text a decoder reads: a .txt as it is; .jsonl records joined by a blank line (as
   * SparseGPT's and Wanda's loaders join WikiText's records with "\n\n").
   */
  joined: string;
}

const bad = (msg: string) => new OnnxError('bad_calibration', msg, 'invalid_value');

/** The format a file name says (.txt, .text; .jsonl, .ndjson), or null. */
export function textFormatOf(name: string): TextFormat | null {
  const m = /\.([a-z]+)$/i.exec(name);
  const ext = m ? m[1].toLowerCase() : '';
  if (ext === 'txt' || ext === 'text') return 'txt';
  if (ext === 'jsonl' || ext === 'ndjson') return 'jsonl';
  return null;
}

/** Records and running text of `content`; `where` names the source in errors. */
export function parseText(content: string, format: TextFormat, where = 'text'): TextRecords {
  if (format === 'txt') {
    const text = content.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
    const records = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
    if (!records.length) throw bad(`${where} holds no text`);
    return { records, joined: text };
  }
  const records: string[] = [];
  content.replace(/\r\n?/g, '\n').split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let v: unknown;
    try { v = JSON.parse(line); } catch { throw bad(`${where}, line ${i + 1}: not JSON`); }
    const t = (v as { text?: unknown } | null)?.text;
    if (typeof t !== 'string') throw bad(`${where}, line ${i + 1}: a record needs a string "text" field`);
    if (t.trim()) records.push(t);
  });
  if (!records.length) throw bad(`${where} holds no record with text`);
  return { records, joined: records.join('\n\n') };
}
