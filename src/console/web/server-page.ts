/**
 * The server page: approved against current for every tool, prompt and resource, side by
 * side per field, with the changed words marked (<del> on the approved side, <ins> on the
 * current), the structural changes of schemas with their severity, findings, provenance, and
 * the conditions and Events as one timeline. Every string the server wrote is rendered by
 * `serverText`: as text, with hidden characters shown.
 */

import type {
  ApprovalRecord,
  ApprovalResult,
  FieldComparison,
  ReviewItem,
  ServerInfo,
  ServerReview,
  TextPart,
  TimelineEntry,
} from './api-types.ts';
import { getJson, serverPath } from './api.ts';
import { badge, h, replace, serverText, when, type Child } from './dom.ts';

/** Characters past which a field's text may scroll in its box (30rem of it). */
const SCROLLS_PAST = 2000;

const KIND_LABEL: Record<ReviewItem['kind'], string> = {
  tool: 'Tool',
  prompt: 'Prompt',
  resource: 'Resource',
  resourceTemplate: 'Resource template',
};

const STATE_LABEL: Record<ReviewItem['state'], string> = {
  changed: 'changed',
  added: 'added, not approved',
  removed: 'approved, no longer listed',
  unchanged: 'unchanged',
  unapproved: 'not approved (no baseline)',
};

export async function loadReview(namespace: string, name: string): Promise<ServerReview> {
  return getJson<ServerReview>(serverPath(namespace, name));
}

/** `approved`: the approval just written from the console, said once at the top. */
export function renderServer(
  main: HTMLElement,
  review: ServerReview,
  approved?: ApprovalResult,
): void {
  const { row } = review;
  const open = review.items.filter((i) => i.state !== 'unchanged');
  const quiet = review.items.filter((i) => i.state === 'unchanged');
  replace(
    main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'All servers'), ' / ', row.namespace),
    h('h1', {}, row.name),
    approved === undefined
      ? undefined
      : h(
          'p',
          { class: 'notice', id: 'approve-done', role: 'status' },
          `Approved by ${approved.record.approvedBy} at ${approved.record.approvedAt}. Drift below follows as the operator compares again.`,
        ),
    summary(review),
    access(review, open.length > 0 || review.baseline !== 'tools'),
    review.snapshotProblem === undefined
      ? undefined
      : h('p', { class: 'notice' }, review.snapshotProblem),
    review.baselineProblem === undefined
      ? undefined
      : h('p', { class: 'notice' }, serverText(review.baselineProblem)),
    h('h2', {}, open.length === 0 ? 'No changes' : `Changes (${open.length})`),
    ...open.map((item) => itemCard(item, true)),
    quiet.length === 0
      ? undefined
      : h(
          'details',
          { class: 'unchanged' },
          h('summary', {}, `Unchanged (${quiet.length})`),
          ...quiet.map((item) => itemCard(item, false)),
        ),
    findings(review),
    provenance(review),
    history(review.history),
    timeline(review.timeline),
  );
}

function summary(review: ServerReview): HTMLElement {
  const { row, snapshot } = review;
  const drift = row.drift;
  return h(
    'dl',
    { class: 'summary' },
    term(
      'Ready',
      row.ready === undefined
        ? '—'
        : badge(
            `${row.ready.status}: ${row.ready.reason}`,
            row.ready.status === 'True' ? 'ok' : 'warn',
          ),
    ),
    term(
      'Drift',
      h(
        'span',
        { id: 'drift-state' },
        badge(
          `${drift.status}: ${drift.reason || 'Unknown'}`,
          drift.status === 'True' ? 'drift' : drift.reason === 'ToolsMatch' ? 'ok' : 'muted',
        ),
        drift.severity === undefined ? undefined : badge(drift.severity, drift.severity),
        drift.since === undefined ? undefined : ` since ${when(drift.since)}`,
      ),
    ),
    term('Transport', row.transport),
    term('Endpoint', review.url ?? review.endpoint ?? '—'),
    term('Snapshot', snapshot === undefined ? '—' : h('code', {}, snapshot.digest)),
    term('Protocol', snapshot?.protocolVersion ?? '—'),
    term('Last discovery', when(row.lastDiscovery)),
    snapshot?.instructions === undefined
      ? undefined
      : term('Instructions', h('div', { class: 'text server' }, serverText(snapshot.instructions))),
  );
}

function term(label: string, ...value: Child[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  fragment.append(h('dt', {}, label), h('dd', {}, ...value));
  return fragment;
}

function access(review: ServerReview, anything: boolean): HTMLElement | undefined {
  if (!review.access.canApprove) {
    return h(
      'p',
      { class: 'notice readonly', id: 'readonly', role: 'note' },
      review.access.reason ?? 'Read-only.',
    );
  }
  if (!anything) return undefined;
  const { namespace, name } = review.row;
  return h(
    'p',
    {},
    h(
      'a',
      {
        class: 'button',
        id: 'approve-link',
        href: `#/approve/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`,
      },
      'Approve…',
    ),
  );
}

/** Who approved what and when, with their notes: spec.tools.approved.history. */
function history(records: ApprovalRecord[]): HTMLElement {
  return h(
    'section',
    { id: 'history' },
    h('h2', {}, 'Approvals'),
    records.length === 0
      ? h('p', {}, 'No approval recorded.')
      : h(
          'ol',
          { class: 'timeline' },
          ...records.map((r) =>
            h(
              'li',
              {},
              h('span', { class: 'small' }, when(r.approvedAt)),
              ' ',
              h('strong', {}, serverText(r.approvedBy)),
              ` approved ${changeCount(r)} from snapshot `,
              h('code', {}, r.snapshotDigest),
              r.note === undefined
                ? undefined
                : h('div', { class: 'text server' }, serverText(r.note)),
            ),
          ),
        ),
  );
}

function changeCount(r: ApprovalRecord): string {
  const n = (r.changes?.length ?? 0) + (r.omitted ?? 0);
  return n === 1 ? '1 change' : `${n} changes`;
}

function itemCard(item: ReviewItem, open: boolean): HTMLElement {
  return h(
    'section',
    {
      class: `item item-${item.state}`,
      aria: { label: `${KIND_LABEL[item.kind]} ${item.key}` },
      dataset: { item: `${item.kind}:${item.key}` },
    },
    h(
      'h3',
      {},
      `${KIND_LABEL[item.kind]} `,
      h('code', { class: 'server' }, serverText(item.key)),
      ' ',
      badge(STATE_LABEL[item.state], item.state),
      item.severity === undefined ? undefined : badge(item.severity, item.severity),
      item.basis === 'digest' || item.basis === 'field-digests'
        ? h('span', { class: 'small' }, ` (baseline: ${item.basis})`)
        : undefined,
    ),
    item.findings.length === 0
      ? undefined
      : h(
          'ul',
          { class: 'findings' },
          ...item.findings.map((f) => h('li', {}, badge('finding', 'warn'), ' ', serverText(f))),
        ),
    item.details.length === 0
      ? undefined
      : h('ul', { class: 'details' }, ...item.details.map((d) => h('li', {}, serverText(d)))),
    item.schemaChanges.length === 0 ? undefined : schemaTable(item),
    open || item.fields.some((f) => f.changed)
      ? fieldsTable(item.fields)
      : h('details', {}, h('summary', {}, 'Definition'), fieldsTable(item.fields)),
  );
}

function schemaTable(item: ReviewItem): HTMLElement {
  return h(
    'table',
    { class: 'schema-changes' },
    h('caption', {}, 'Schema changes'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Field', 'Path', 'Change', 'Severity'].map((t) => h('th', { scope: 'col' }, t)),
      ),
    ),
    h(
      'tbody',
      {},
      ...item.schemaChanges.map((c) =>
        h(
          'tr',
          {},
          h('td', {}, c.field),
          h('td', {}, h('code', { class: 'server' }, serverText(c.path))),
          h('td', {}, h('span', { class: 'small' }, `${c.effect}: `), serverText(c.detail)),
          h('td', {}, badge(c.severity, c.severity)),
        ),
      ),
    ),
  );
}

function fieldsTable(fields: FieldComparison[]): HTMLElement {
  const changed = fields.some((f) => f.changed);
  return h(
    'table',
    { class: 'fields' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Field'),
        ...(changed
          ? [h('th', { scope: 'col' }, 'Approved'), h('th', { scope: 'col' }, 'Current')]
          : [h('th', { scope: 'col' }, 'Current')]),
      ),
    ),
    h('tbody', {}, ...fields.map((f) => fieldRow(f, changed))),
  );
}

function fieldRow(field: FieldComparison, twoColumns: boolean): HTMLElement {
  // A long text scrolls in its box; the box takes focus so that the keyboard can scroll it.
  const long = Math.max(field.approved?.length ?? 0, field.current?.length ?? 0) > SCROLLS_PAST;
  const cell = (content: Child) =>
    h(
      'td',
      {},
      h(
        'div',
        {
          class: `text server form-${field.form}`,
          ...(long
            ? { tabindex: 0, role: 'region', aria: { label: `${field.field}, scrollable` } }
            : {}),
        },
        content,
      ),
    );
  const head = h(
    'th',
    { scope: 'row' },
    field.field,
    field.changed ? h('span', { class: 'changed-mark' }, ' changed') : undefined,
  );
  if (!twoColumns) return h('tr', {}, head, cell(plain(field.current)));
  if (!field.changed)
    return h('tr', {}, head, h('td', { class: 'small' }, 'same'), cell(plain(field.current)));
  if (field.parts !== undefined) {
    return h(
      'tr',
      { class: 'changed' },
      head,
      cell(side(field.parts, '-')),
      cell(side(field.parts, '+')),
    );
  }
  return h(
    'tr',
    { class: 'changed' },
    head,
    cell(field.note === undefined ? plain(field.approved) : h('em', {}, field.note)),
    cell(plain(field.current)),
  );
}

function plain(text: string | undefined): Child {
  return text === undefined ? h('em', {}, 'absent') : serverText(text);
}

/** One side of a comparison: the kept parts, and this side's own (removed or added) marked. */
function side(parts: TextPart[], own: '-' | '+'): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of parts) {
    if (part.op === '=') fragment.append(serverText(part.text));
    else if (part.op === own)
      fragment.append(h(own === '-' ? 'del' : 'ins', {}, serverText(part.text)));
  }
  return fragment;
}

function findings(review: ServerReview): HTMLElement | undefined {
  if (review.findings.length === 0) return undefined;
  return h(
    'section',
    {},
    h('h2', {}, `Findings (${review.findings.length})`),
    h(
      'ul',
      { class: 'findings' },
      ...review.findings.map((f) =>
        h(
          'li',
          {},
          h('code', { class: 'server' }, serverText(f.item)),
          ': ',
          serverText(f.problem),
        ),
      ),
    ),
  );
}

function provenance(review: ServerReview): HTMLElement {
  const p = review.provenance;
  const packages = (list: { launcher: string; name: string; version: string }[]) =>
    list.length === 0
      ? '—'
      : h(
          'ul',
          {},
          ...list.map((x) => h('li', {}, serverText(`${x.launcher} ${x.name}@${x.version}`))),
        );
  const info = (i: ServerInfo | undefined) =>
    i === undefined ? '—' : serverText(`${i.name ?? '(no name)'} ${i.version ?? '(no version)'}`);
  return h(
    'section',
    {},
    h('h2', {}, 'Provenance'),
    h(
      'dl',
      { class: 'summary' },
      term('Image', p.image === undefined ? '—' : serverText(p.image)),
      term(
        'Image digests',
        p.imageDigests.length === 0
          ? '—'
          : h('ul', {}, ...p.imageDigests.map((d) => h('li', {}, h('code', {}, d)))),
      ),
      term('Packages', packages(p.packages)),
      term('Server says it is', info(p.serverInfo)),
      term(
        'Code changed',
        p.codeChanged === undefined
          ? 'no'
          : h(
              'span',
              {},
              badge('code changed', 'warn'),
              ` since ${when(p.codeChanged.since)}: `,
              serverText(p.codeChanged.message),
            ),
      ),
      p.approved === undefined
        ? term('When approved', 'no provenance recorded')
        : term(
            'When approved',
            h(
              'ul',
              {},
              h('li', {}, 'image digests: ', p.approved.imageDigests.join(', ') || '—'),
              h('li', {}, 'packages: ', packages(p.approved.packages)),
              h('li', {}, 'server: ', info(p.approved.serverInfo)),
            ),
          ),
      ...p.annotations.map((a) => term(a.key, serverText(a.value))),
    ),
  );
}

/** A Warning Event, Drifted=True, or any other condition False. */
function needsAttention(e: TimelineEntry): boolean {
  if (e.source === 'event') return e.kind === 'Warning';
  return e.kind === 'Drifted' ? e.status === 'True' : e.status === 'False';
}

function timeline(entries: TimelineEntry[]): HTMLElement {
  return h(
    'section',
    {},
    h('h2', {}, 'Timeline'),
    entries.length === 0
      ? h('p', {}, 'No conditions or Events.')
      : h(
          'ol',
          { class: 'timeline' },
          ...entries.map((e) =>
            h(
              'li',
              { class: `tl-${e.source}` },
              h('span', { class: 'small' }, when(e.time)),
              ' ',
              badge(
                e.source === 'condition' ? `${e.kind}=${e.status ?? ''}` : e.kind,
                needsAttention(e) ? 'warn' : 'muted',
              ),
              ' ',
              h('strong', {}, serverText(e.reason)),
              e.count !== undefined && e.count > 1 ? ` ×${e.count}` : '',
              ': ',
              serverText(e.message),
            ),
          ),
        ),
  );
}
