/**
 * The fleet page: every MCPServer the user can list, one row each, filtered and sorted in the
 * page. Live: a row changes when its server does (the stream), redrawn at most once a frame.
 * A thousand rows are a thousand small objects and one table; the table is rebuilt only when
 * a row, the filter or the order changed.
 */

import type { FleetRow, Severity, StreamMessage } from './api-types.ts';
import { getJson } from './api.ts';
import { ago, badge, h, replace, serverText } from './dom.ts';

type SortKey =
  'name' | 'namespace' | 'ready' | 'transport' | 'tools' | 'drift' | 'findings' | 'discovered';

/** Quiet time after a row changed in place before the table is sorted again. */
const REORDER_AFTER_MS = 1000;

/**
 * Rows drawn first when the page opens, the rest once they show: more than a screen holds.
 * Before the first row can show, every row in the table is made and laid out; a thousand of
 * them held the first paint up several times as long as these.
 */
const FIRST_ROWS = 60;

/** Performance marks (for bench/console.ts): the first rows in the document, then painted. */
export const DRAWN = 'console:fleet-drawn';
export const PAINTED = 'console:fleet-painted';

const SEVERITY_RANK: Record<Severity, number> = {
  'description-only': 1,
  compatible: 2,
  widening: 3,
  breaking: 4,
};

const COLUMNS: { key: SortKey; label: string }[] = [
  { key: 'name', label: 'Name' },
  { key: 'namespace', label: 'Namespace' },
  { key: 'ready', label: 'Ready' },
  { key: 'transport', label: 'Transport' },
  { key: 'tools', label: 'Tools · prompts · resources' },
  { key: 'drift', label: 'Drift' },
  { key: 'findings', label: 'Findings' },
  { key: 'discovered', label: 'Last discovery' },
];

const FILTERS = {
  all: 'every server',
  drifted: 'drifted',
  unapproved: 'no baseline',
  'not-ready': 'not ready',
  'code-changed': 'code changed',
  findings: 'with findings',
} as const;
type Filter = keyof typeof FILTERS;

function sortValue(row: FleetRow, key: SortKey): string | number {
  switch (key) {
    case 'name':
      return row.name;
    case 'namespace':
      return row.namespace;
    case 'ready':
      return row.ready?.status === 'True' ? 1 : 0;
    case 'transport':
      return row.transport;
    case 'tools':
      return row.tools ?? -1;
    case 'drift':
      return (
        (row.drift.status === 'True' ? 10 : 0) +
        (row.drift.severity ? SEVERITY_RANK[row.drift.severity] : 0)
      );
    case 'findings':
      return row.findings;
    case 'discovered':
      return row.lastDiscovery ?? '';
  }
}

function matches(row: FleetRow, filter: Filter, text: string): boolean {
  const ok =
    filter === 'all' ||
    (filter === 'drifted' && row.drift.status === 'True') ||
    (filter === 'unapproved' && row.drift.reason === 'NoBaseline') ||
    (filter === 'not-ready' && row.ready?.status !== 'True') ||
    (filter === 'code-changed' && row.codeChanged !== undefined) ||
    (filter === 'findings' && row.findings > 0);
  if (!ok) return false;
  if (text === '') return true;
  return `${row.namespace}/${row.name} ${row.drift.reason} ${row.transport}`
    .toLowerCase()
    .includes(text);
}

export class FleetPage {
  readonly #rows = new Map<string, FleetRow>();
  #sort: SortKey = 'drift';
  #descending = true;
  #filter: Filter = 'all';
  #text = '';
  #pending = false;
  #reorder: number | undefined;
  /**
   * Each row's element, kept while its row is unchanged: sorting again moves elements rather
   * than making a thousand rows of elements anew, which held up the next change on the page.
   */
  readonly #elements = new Map<string, { row: FleetRow; el: HTMLTableRowElement }>();
  readonly #body = h('tbody');
  readonly #count = h('p', { class: 'count', role: 'status' });
  readonly #head = h('tr');

  async show(main: HTMLElement): Promise<void> {
    const fleet = await getJson<{ rows: FleetRow[] }>('/api/fleet');
    for (const row of fleet.rows) this.#rows.set(row.key, row);
    replace(
      main,
      h('h1', {}, 'MCP servers'),
      this.#controls(),
      this.#count,
      h(
        'table',
        { class: 'fleet' },
        h('caption', { class: 'visually-hidden' }, 'MCP servers, one a row'),
        h('thead', {}, this.#head),
        this.#body,
      ),
    );
    this.#draw(FIRST_ROWS);
    // A task queued from an animation frame runs once that frame is painted.
    requestAnimationFrame(() =>
      setTimeout(() => {
        if (performance.getEntriesByName(PAINTED).length === 0) performance.mark(PAINTED);
        this.#schedule();
      }),
    );
  }

  /**
   * A change from the stream. A row on the page is replaced where it stands, at once; the
   * table is sorted and filtered again once changes pause (rows do not jump under the reader
   * with every status write), and redrawn at most once a frame for rows added or removed.
   */
  apply(message: StreamMessage): void {
    if (message.type === 'touch') return;
    if (message.type === 'delete') {
      this.#rows.delete(message.key);
      this.#schedule();
      return;
    }
    const { row } = message;
    const old = this.#rows.get(row.key);
    this.#rows.set(row.key, row);
    const shown = this.#elements.get(row.key)?.el;
    if (old === undefined || shown === undefined || !shown.isConnected) {
      this.#schedule();
      return;
    }
    shown.replaceWith(this.#element(row));
    if (this.#inPlace(old, row)) return;
    clearTimeout(this.#reorder);
    this.#reorder = window.setTimeout(() => this.#schedule(), REORDER_AFTER_MS);
  }

  /** Whether a changed row keeps its place: it sorts and filters as it did. */
  #inPlace(old: FleetRow, row: FleetRow): boolean {
    return (
      sortValue(old, this.#sort) === sortValue(row, this.#sort) &&
      matches(old, this.#filter, this.#text) === matches(row, this.#filter, this.#text)
    );
  }

  /** The element of a row, made again only when the row changed. */
  #element(row: FleetRow): HTMLTableRowElement {
    const known = this.#elements.get(row.key);
    if (known?.row === row) return known.el;
    const el = rowElement(row);
    this.#elements.set(row.key, { row, el });
    return el;
  }

  /** Everything again, after the stream reconnected. */
  async reload(): Promise<void> {
    const fleet = await getJson<{ rows: FleetRow[] }>('/api/fleet');
    this.#rows.clear();
    for (const row of fleet.rows) this.#rows.set(row.key, row);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#pending) return;
    this.#pending = true;
    requestAnimationFrame(() => {
      this.#pending = false;
      this.#draw();
    });
  }

  #controls(): HTMLElement {
    const search = h('input', {
      type: 'search',
      id: 'fleet-search',
      on: {
        input: () => {
          this.#text = search.value.trim().toLowerCase();
          this.#draw();
        },
      },
    });
    const select = h(
      'select',
      {
        id: 'fleet-filter',
        on: {
          change: () => {
            this.#filter = select.value as Filter;
            this.#draw();
          },
        },
      },
      ...Object.entries(FILTERS).map(([value, label]) => h('option', { value }, label)),
    );
    return h(
      'div',
      { class: 'controls' },
      h('label', { for: 'fleet-search' }, 'Filter by name '),
      search,
      h('label', { for: 'fleet-filter' }, ' Show '),
      select,
    );
  }

  /** Sorts, filters and shows the rows (the first `limit` of them). */
  #draw(limit = Infinity): void {
    const rows = [...this.#rows.values()].filter((row) => matches(row, this.#filter, this.#text));
    const sign = this.#descending ? -1 : 1;
    rows.sort((a, b) => {
      const x = sortValue(a, this.#sort);
      const y = sortValue(b, this.#sort);
      const order = x < y ? -1 : x > y ? 1 : 0;
      return order === 0 ? a.key.localeCompare(b.key) : sign * order;
    });
    replace(this.#head, ...COLUMNS.map((column) => this.#header(column.key, column.label)));
    for (const key of this.#elements.keys()) if (!this.#rows.has(key)) this.#elements.delete(key);
    arrange(
      this.#body,
      rows.slice(0, limit).map((row) => this.#element(row)),
    );
    this.#count.textContent = `${rows.length} of ${this.#rows.size} servers`;
    // User Timing for the bench (bench/console.ts): when the rows were first in the document.
    if (performance.getEntriesByName(DRAWN).length === 0) performance.mark(DRAWN);
  }

  #header(key: SortKey, label: string): HTMLElement {
    const active = this.#sort === key;
    return h(
      'th',
      {
        scope: 'col',
        aria: active ? { sort: this.#descending ? 'descending' : 'ascending' } : {},
      },
      h(
        'button',
        {
          type: 'button',
          class: 'sort',
          on: {
            click: () => {
              this.#descending = active ? !this.#descending : key === 'drift' || key === 'findings';
              this.#sort = key;
              this.#draw();
              document.querySelector<HTMLButtonElement>(`th[aria-sort] button`)?.focus();
            },
          },
        },
        label,
        active ? (this.#descending ? ' ▼' : ' ▲') : '',
      ),
    );
  }
}

/**
 * Makes `parent`'s children exactly `wanted`, in order, moving as few as it can: a row that
 * moved up is inserted at its place, one that moved down is taken out when its successor is
 * reached and inserted where it belongs.
 */
function arrange(parent: HTMLElement, wanted: readonly HTMLElement[]): void {
  let cursor = parent.firstElementChild;
  for (const el of wanted) {
    if (cursor !== null && cursor !== el && cursor.nextElementSibling === el) {
      const out = cursor;
      cursor = el;
      out.remove();
    }
    if (cursor === el) {
      cursor = cursor.nextElementSibling;
      continue;
    }
    parent.insertBefore(el, cursor);
  }
  while (cursor !== null) {
    const next = cursor.nextElementSibling;
    cursor.remove();
    cursor = next;
  }
}

function rowElement(row: FleetRow): HTMLTableRowElement {
  const drift = row.drift;
  return h(
    'tr',
    { dataset: { key: row.key } },
    h(
      'td',
      {},
      h(
        'a',
        { href: `#/server/${encodeURIComponent(row.namespace)}/${encodeURIComponent(row.name)}` },
        row.name,
      ),
    ),
    h('td', {}, row.namespace),
    h(
      'td',
      {},
      row.ready === undefined
        ? '—'
        : badge(
            `${row.ready.status === 'True' ? 'Ready' : 'Not ready'}: ${row.ready.reason}`,
            row.ready.status === 'True' ? 'ok' : 'warn',
          ),
    ),
    h('td', {}, row.transport),
    h(
      'td',
      { class: 'num' },
      `${row.tools ?? '—'} · ${row.prompts ?? '—'} · ${row.resources ?? '—'}`,
    ),
    h(
      'td',
      { class: 'drift' },
      badge(
        drift.reason || 'Unknown',
        drift.status === 'True' ? 'drift' : drift.reason === 'ToolsMatch' ? 'ok' : 'muted',
      ),
      drift.severity === undefined ? undefined : badge(drift.severity, drift.severity),
      drift.status === 'True'
        ? h(
            'span',
            { class: 'small' },
            ` ${drift.changed} changed, ${drift.added} added, ${drift.removed} removed`,
          )
        : undefined,
      drift.since === undefined
        ? undefined
        : h('span', { class: 'small' }, ` since ${ago(Date.now() - Date.parse(drift.since))}`),
    ),
    h(
      'td',
      {},
      row.findings > 0 ? badge(`${row.findings}`, 'warn') : '0',
      row.codeChanged === undefined
        ? undefined
        : h(
            'span',
            { class: 'badge badge-warn', title: '' },
            'code changed: ',
            serverText(row.codeChanged.message),
          ),
    ),
    h(
      'td',
      { class: 'small' },
      row.lastDiscovery === undefined ? 'never' : ago(Date.now() - Date.parse(row.lastDiscovery)),
    ),
  );
}
