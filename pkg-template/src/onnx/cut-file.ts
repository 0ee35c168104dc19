// The sweep's cut store in Node (calib/cut-store.ts): an unlinked scratch file in the temp directory,
// whose freed ranges are used again, so that it holds about the largest cut that went to it (one
// value of every sample: the tensors of a decoder's cut all have one size), not all that went
// through it. The space is freed when the store is emptied or the process ends. What sits in it is
// in the page cache, not in the process's resident memory.
import fs from 'node:fs';
import { readAt, scratchFile, writeAt } from './node-io.js';

interface Range { at: number; len: number }

// It has calib/cut-store.ts's CutStore shape (checked where files.ts hands it out as one: this
// folder's files do not import calib/).
export class FileCutStore {
  private fd = -1;
  private end = 0;
  private live = 0;
  /** Free ranges below `end`, sorted by offset, none adjacent. */
  private readonly gaps: Range[] = [];

  private open(): number {
    if (this.fd < 0) this.fd = scratchFile('sparsekit-cut-');
    return this.fd;
  }

  put(bytes: Uint8Array): number {
    const len = bytes.length;
    if (!len) return 0;
    const fd = this.open();
    // first fit: a cut's tensors are of one size, so a freed one is used again whole
    const g = this.gaps.findIndex((r) => r.len >= len);
    let at: number;
    if (g >= 0) {
      at = this.gaps[g].at;
      if (this.gaps[g].len === len) this.gaps.splice(g, 1);
      else this.gaps[g] = { at: at + len, len: this.gaps[g].len - len };
    } else {
      at = this.end;
      this.end += len;
    }
    writeAt(fd, bytes, at);
    this.live++;
    return at;
  }

  read(ref: number, into: Uint8Array): void {
    readAt(this.open(), into, ref, 'the scratch file of the calibration cut');
  }

  free(ref: number, length: number): void {
    if (length <= 0) return;
    let i = this.gaps.findIndex((r) => r.at > ref);
    if (i < 0) i = this.gaps.length;
    this.gaps.splice(i, 0, { at: ref, len: length });
    // merge with the next and the previous free range
    if (i + 1 < this.gaps.length && this.gaps[i].at + this.gaps[i].len === this.gaps[i + 1].at) {
      this.gaps[i].len += this.gaps[i + 1].len;
      this.gaps.splice(i + 1, 1);
    }
    if (i > 0 && this.gaps[i - 1].at + this.gaps[i - 1].len === this.gaps[i].at) {
      this.gaps[i - 1].len += this.gaps[i].len;
      this.gaps.splice(i, 1);
      i--;
    }
    // a free range at the end shortens the file
    if (this.gaps[i].at + this.gaps[i].len === this.end) {
      this.end = this.gaps[i].at;
      this.gaps.splice(i, 1);
    }
    // emptied: the file's pages go (those still dirty are never written to the disk)
    if (--this.live === 0) {
      this.gaps.length = 0;
      this.end = 0;
      fs.ftruncateSync(this.fd, 0);
    }
  }

  /** Bytes of the file in use or free between used ranges. */
  get size(): number { return this.end; }
}
