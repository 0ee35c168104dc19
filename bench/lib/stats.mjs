// Order statistics the bench scripts share (Node and the Chromium worker import it alike).

/** A sorted copy (ascending). */
export const sorted = (a) => [...a].sort((x, y) => x - y);

/** The `p`-quantile of an already sorted array: the element at `floor(p * n)`, clamped. */
export const quantile = (s, p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];

/** The median: the upper middle element for an even count. */
export const median = (a) => quantile(sorted(a), 0.5);
