// Small DOM helpers of the page: element lookup, the error slot, the status line, downloads, cells
// and the figure tiles of the result cards.

/** The element with this id (the page's markup is fixed: a missing id is a bug, reported loudly). */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`internal: #${id} is missing from index.html`);
  return el as T;
}
export const input = (id: string) => $<HTMLInputElement>(id);
export const select = (id: string) => $<HTMLSelectElement>(id);
export const button = (id: string) => $<HTMLButtonElement>(id);

export function showError(message: string): void {
  clearError();
  const div = document.createElement('div');
  div.className = 'error';
  div.dataset.testid = 'error';
  div.setAttribute('role', 'alert');
  const strong = document.createElement('strong');
  strong.textContent = 'Error: ';
  div.append(strong, document.createTextNode(message));
  $('error-slot').append(div);
}
export function clearError(): void { $('error-slot').replaceChildren(); }
export function setStatus(text: string): void { $('status').textContent = text; }

/** A message with the error's code in front when it has one ("[shape_mismatch] …"). */
export function describeError(e: unknown): string {
  const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
  return `${typeof code === 'string' && code ? `[${code}] ` : ''}${typeof message === 'string' ? message : String(e)}`;
}

export function download(name: string, data: Uint8Array | string, type = 'application/octet-stream'): void {
  // (the page's buffers are never shared: Blob takes them as they are)
  const url = URL.createObjectURL(new Blob([data as Uint8Array<ArrayBuffer> | string], { type }));
  const a = document.createElement('a');
  a.href = url; a.download = name; a.style.display = 'none';
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Appends a cell holding text or a node to a row. */
export function makeCell(row: HTMLTableRowElement, content: Node | string): HTMLTableCellElement {
  const td = document.createElement('td');
  if (content instanceof Node) td.append(content); else td.textContent = content;
  row.append(td);
  return td;
}

/** One figure of a totals row: value (with a test id), label, optional sub-line. */
export function statTile(label: string, value: string, testid?: string | null, sub?: string): HTMLDivElement {
  const d = document.createElement('div'); d.className = 'stat';
  const v = document.createElement('div'); v.className = 'value'; v.textContent = value; if (testid) v.dataset.testid = testid;
  const l = document.createElement('div'); l.className = 'label'; l.textContent = label;
  d.append(v, l);
  if (sub) { const s = document.createElement('div'); s.className = 'sub'; s.textContent = sub; d.append(s); }
  return d;
}
