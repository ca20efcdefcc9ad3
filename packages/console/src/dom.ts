// A few lines of DOM building. Text always goes in as text nodes, never as HTML: event data and
// catalog entries come from payers and sellers, and must not become markup.
export type Child = Node | string | number | null | undefined | false | readonly Child[];
type Attr = string | number | boolean | null | undefined | ((event: Event) => void);
export type Attrs = Record<string, Attr>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (typeof child === 'string' || typeof child === 'number') el.append(String(child));
    else if (child instanceof Node) el.append(child);
    else append(el, child);
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/**
 * A table with a header row; `empty` is shown in a single cell when there are no rows. It comes
 * in a box of its own that scrolls sideways, so a wide table on a phone moves alone, not the page.
 */
export function table(
  headers: readonly string[],
  rows: readonly (readonly Child[] | HTMLTableRowElement)[],
  empty: string,
  attrs: Attrs = {},
): HTMLElement {
  const body = rows.map((row) =>
    row instanceof HTMLTableRowElement
      ? row
      : h(
          'tr',
          null,
          row.map((cell) => h('td', null, cell)),
        ),
  );
  const el = h(
    'table',
    attrs,
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        headers.map((t) => h('th', null, t)),
      ),
    ),
    h('tbody', null, body.length > 0 ? body : h('tr', { class: 'empty' }, h('td', { colspan: headers.length }, empty))),
  );
  return h('div', { class: 'table-box' }, el);
}

/** A labelled figure: `<div class="stat"><span>label</span><strong data-field=…>value</strong></div>`. */
export function stat(label: string, value: Child, field?: string, note?: Child): HTMLElement {
  return h(
    'div',
    { class: 'stat' },
    h('span', { class: 'label' }, label),
    h('strong', { 'data-field': field }, value),
    note ? h('small', null, note) : null,
  );
}

export function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'panel' }, h('h2', null, title), ...children);
}
