// 1 − cos between two tensors of one shape, row by row (a row: the last axis), summed with the count
// of rows: the measure of ShortGPT's block influence (block-influence.ts) and of a head's influence
// at the outputs (head-influence.ts). Rows where both are zero count as equal.

/** Sum over rows of 1 − cos(a row, b row), and the rows counted; `skip(r)` leaves row r out. */
export function rowDistance(a: ArrayLike<number>, b: ArrayLike<number>, width: number, skip?: (row: number) => boolean): [number, number] {
  let sum = 0, rows = 0;
  for (let r = 0, o = 0; o + width <= a.length; r++, o += width) {
    if (skip?.(r)) continue;
    let d = 0, na = 0, nb = 0;
    for (let i = o; i < o + width; i++) { d += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
    const cos = na === 0 && nb === 0 ? 1 : na === 0 || nb === 0 ? 0 : d / Math.sqrt(na * nb);
    sum += 1 - cos;
    rows++;
  }
  return [sum, rows];
}
