// SVG elements for the page's small charts (the goal card's plan curve, the recovery card's live
// fidelity curve): one helper, so every chart builds its nodes the same way.
const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with its attributes and, optionally, its text. */
export function svgEl(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}
