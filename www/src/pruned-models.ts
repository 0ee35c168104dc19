// The pruned models the page has made, by the card that made them (the main run, calibration,
// channels, goal-first search), so that the recovery card can bring any of them back towards the
// loaded original. A new model clears the list: a student only makes sense with its own teacher.
export type PrunedSource = 'run' | 'calibration' | 'channels' | 'goal';

export const SOURCE_LABELS: Readonly<Record<PrunedSource, string>> = {
  run: '3 · pruning run (masks)',
  calibration: '2b · calibration',
  channels: '2c · channel removal',
  goal: '2d · goal-first search',
};

const made = new Map<PrunedSource, Uint8Array>();
const listeners: (() => void)[] = [];

/** A card has made a pruned model (self-contained bytes); the newest of each card is kept. */
export function offerPruned(source: PrunedSource, bytes: Uint8Array): void {
  made.delete(source); // re-inserted last: the map's order is the order they were made
  made.set(source, bytes);
  for (const l of listeners) l();
}

/** The pruned models made so far, newest per card. */
export function prunedModels(): ReadonlyMap<PrunedSource, Uint8Array> {
  return made;
}

export function clearPruned(): void {
  made.clear();
  for (const l of listeners) l();
}

export function onPrunedChange(f: () => void): void {
  listeners.push(f);
}
