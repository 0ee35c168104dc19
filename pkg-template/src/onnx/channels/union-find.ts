// Channel ids and the two partitions over them. Every id is one channel of one *space* (the output
// channels of one producer). `union(a, b)` says channels a and b must go together (a residual Add, a
// depthwise Conv, the channels of one attention head); it also merges their spaces, and a group is a
// merged space: its channels compete with each other for the same budget.
import type { Slice } from './types.js';

export class ChannelSets {
  private readonly parent: number[] = [];
  private readonly spaceParent: number[] = [];
  /** Per channel root: every slice that goes with it. */
  readonly slices: Slice[][] = [];
  /** Per channel root: why it cannot be removed (the first reason found). */
  readonly blocked: (string | undefined)[] = [];
  /** Per channel root: the KV group of a query head, when query heads are the unit (setRun). */
  readonly run: (number | undefined)[] = [];
  private readonly spaceOf: number[] = [];
  /** Per space root: the producers merged into it, for reports. */
  private readonly spaceNames: string[][] = [];

  get size(): number { return this.parent.length; }

  /** `count` new channels in a new space named after its producer (blocked from the start with `why`). */
  newSpace(count: number, name: string, why?: string): number[] {
    const space = this.spaceParent.length;
    this.spaceParent.push(space);
    this.spaceNames.push([name]);
    const ids: number[] = [];
    for (let k = 0; k < count; k++) {
      const id = this.parent.length;
      this.parent.push(id);
      this.slices.push([]);
      this.blocked.push(why);
      this.run.push(undefined);
      this.spaceOf.push(space);
      ids.push(id);
    }
    return ids;
  }

  find(x: number): number {
    const p = this.parent;
    while (p[x] !== x) { p[x] = p[p[x]]; x = p[x]; }
    return x;
  }

  private findSpace(x: number): number {
    const p = this.spaceParent;
    while (p[x] !== x) { p[x] = p[p[x]]; x = p[x]; }
    return x;
  }

  union(a: number, b: number): void {
    const ra = this.find(a), rb = this.find(b);
    if (ra !== rb) {
      this.parent[rb] = ra;
      for (const s of this.slices[rb]) this.slices[ra].push(s);
      this.slices[rb] = [];
      this.blocked[ra] ??= this.blocked[rb];
      if (this.run[rb] !== undefined && this.run[ra] !== undefined && this.run[rb] !== this.run[ra]) this.blocked[ra] ??= 'query heads of two KV groups are tied';
      this.run[ra] ??= this.run[rb];
    }
    const sa = this.findSpace(this.spaceOf[a]), sb = this.findSpace(this.spaceOf[b]);
    if (sa !== sb) {
      this.spaceParent[sb] = sa;
      this.spaceNames[sa].push(...this.spaceNames[sb]);
    }
  }

  block(id: number, why: string): void { this.blocked[this.find(id)] ??= why; }

  /** Channel `id` is a query head of KV group `run` (a second, different group blocks it). */
  setRun(id: number, run: number): void {
    const r = this.find(id);
    if (this.run[r] !== undefined && this.run[r] !== run) this.blocked[r] ??= 'a query head read by two KV groups';
    this.run[r] ??= run;
  }

  addSlice(id: number, slice: Slice): void { this.slices[this.find(id)].push(slice); }

  /** Channel roots per merged space, in id order, with the space's producer names. */
  spaces(): { producers: string[]; roots: number[] }[] {
    const bySpace = new Map<number, number[]>();
    for (let id = 0; id < this.parent.length; id++) {
      if (this.find(id) !== id) continue;
      const s = this.findSpace(this.spaceOf[id]);
      (bySpace.get(s) ?? bySpace.set(s, []).get(s)!).push(id);
    }
    return [...bySpace].map(([s, roots]) => ({ producers: this.spaceNames[s], roots }));
  }
}
