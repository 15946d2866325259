/**
 * The approve page (`#/approve/<ns>/<name>`): choose every entry or some tools, add a note,
 * see exactly what will be written to spec.tools.approved, and apply. The preview is planned
 * by the console from the server as it is now and comes again (debounced) whenever the choice
 * or the note changes; Approve sends the previewed resourceVersion back, so a server that
 * changed since is refused with nothing written and the page asks to preview again. Every
 * control is a native input or button: the whole flow works from the keyboard.
 */

import type {
  ApprovalPreview,
  ApprovalRequest,
  ApprovalResult,
  PlannedEntry,
  PreviewRequest,
  ServerReview,
  StreamMessage,
} from './api-types.ts';
import { ApiFailure, postJson, serverPath } from './api.ts';
import { badge, h, replace, serverText } from './dom.ts';

/** Quiet time after a change of the choice or the note before the preview is asked again. */
const PREVIEW_AFTER_MS = 300;

/** Characters past which a text may scroll in its box (as on the server page). */
const SCROLLS_PAST = 2000;

/** The longest note spec.tools.approved.history keeps (APPROVAL_NOTE_MAX). */
const NOTE_MAX = 1024;

export class ApprovePage {
  readonly #review: ServerReview;
  readonly #done: (result: ApprovalResult) => void;
  #preview: ApprovalPreview | undefined;
  /** Bumped with every preview asked for, so that only the latest one is shown. */
  #asked = 0;
  #timer: number | undefined;
  readonly #all = h('input', { type: 'radio', name: 'scope', id: 'approve-all', checked: true });
  readonly #some = h('input', { type: 'radio', name: 'scope', id: 'approve-some' });
  readonly #tools = h('fieldset', { id: 'approve-tools', class: 'choices' });
  readonly #note = h('textarea', { id: 'approve-note', rows: 3, maxlength: NOTE_MAX });
  readonly #plan = h('section', { id: 'approve-plan', aria: { live: 'polite' } });
  readonly #confirm = h('input', { type: 'checkbox', id: 'approve-confirm' });
  readonly #confirmRow = h(
    'p',
    { hidden: true },
    this.#confirm,
    h(
      'label',
      { for: 'approve-confirm' },
      ' I reviewed the entries this replaces or removes, not only the new ones',
    ),
  );
  readonly #apply = h(
    'button',
    { type: 'button', class: 'primary', id: 'approve-apply' },
    'Approve',
  );
  readonly #outcome = h('div', { id: 'approve-outcome', role: 'alert' });

  constructor(review: ServerReview, done: (result: ApprovalResult) => void) {
    this.#review = review;
    this.#done = done;
  }

  get key(): string {
    return this.#review.row.key;
  }

  async show(main: HTMLElement): Promise<void> {
    const { row, access } = this.#review;
    const back =
      `#/server/${encodeURIComponent(row.namespace)}/${encodeURIComponent(row.name)}` as const;
    const head = [
      h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'All servers'), ' / ', row.namespace),
      h('h1', {}, `Approve ${row.name}`),
    ];
    if (!access.canApprove) {
      replace(
        main,
        ...head,
        h(
          'p',
          { class: 'notice readonly', id: 'readonly', role: 'note' },
          access.reason ?? 'Read-only.',
        ),
        h('p', {}, h('a', { href: back }, 'Back to the server')),
      );
      return;
    }
    for (const input of [this.#all, this.#some]) {
      input.addEventListener('change', () => this.#choiceChanged());
    }
    this.#note.addEventListener('input', () => this.#later());
    this.#confirm.addEventListener('change', () => this.#ready());
    this.#apply.addEventListener('click', () => void this.#approve());
    replace(
      main,
      ...head,
      h(
        'p',
        {},
        'Approving makes what the server lists now its baseline: drift is then measured from it. ',
        h('a', { href: back }, 'Review the changes side by side first.'),
      ),
      h(
        'fieldset',
        { class: 'choices' },
        h('legend', {}, 'What to approve'),
        h('p', {}, this.#all, h('label', { for: 'approve-all' }, ' Every entry the server lists')),
        h('p', {}, this.#some, h('label', { for: 'approve-some' }, ' Only the tools chosen below')),
        this.#tools,
      ),
      h('p', {}, h('label', { for: 'approve-note' }, 'Note (why; kept with the approval)')),
      this.#note,
      this.#plan,
      this.#confirmRow,
      h('p', {}, this.#apply),
      this.#outcome,
    );
    this.#apply.disabled = true;
    await this.#ask();
  }

  /**
   * A change of the server from the stream. The watch may lag behind the preview's own read, so
   * the server is asked again; if it moved past the previewed version, the preview is no longer
   * what would be approved: the page says so and offers to preview again, rather than
   * replacing what the reviewer is reading under their eyes.
   */
  apply(message: StreamMessage): void {
    const shown = this.#preview;
    if (message.type !== 'upsert' || message.row.key !== this.key || shown === undefined) return;
    if (message.row.resourceVersion === shown.resourceVersion) return;
    const { row } = this.#review;
    void postJson<ApprovalPreview>(serverPath(row.namespace, row.name, '/preview'), this.#request())
      .then((now) => {
        if (this.#preview === shown && now.resourceVersion !== shown.resourceVersion) this.#stale();
      })
      .catch(() => undefined);
  }

  async reload(): Promise<void> {
    await this.#ask();
  }

  #request(): PreviewRequest {
    const note = this.#note.value.trim();
    const tools = this.#some.checked
      ? [...this.#tools.querySelectorAll<HTMLInputElement>('input:checked')].map((i) => i.value)
      : undefined;
    return { tools, note: note === '' ? undefined : note };
  }

  #choiceChanged(): void {
    for (const input of this.#tools.querySelectorAll('input')) input.disabled = !this.#some.checked;
    this.#later();
  }

  #later(): void {
    this.#apply.disabled = true;
    clearTimeout(this.#timer);
    this.#timer = window.setTimeout(() => void this.#ask(), PREVIEW_AFTER_MS);
  }

  async #ask(): Promise<void> {
    const mine = ++this.#asked;
    this.#apply.disabled = true;
    const { row } = this.#review;
    try {
      const preview = await postJson<ApprovalPreview>(
        serverPath(row.namespace, row.name, '/preview'),
        this.#request(),
      );
      if (mine !== this.#asked) return;
      this.#preview = preview;
      this.#showPreview(preview);
    } catch (error) {
      if (mine !== this.#asked) return;
      this.#preview = undefined;
      replace(this.#plan, h('p', { class: 'notice error' }, message(error)));
    }
    this.#ready();
  }

  #ready(): void {
    const p = this.#preview;
    this.#apply.disabled =
      p === undefined ||
      !p.changesSpec ||
      (this.#some.checked && (this.#request().tools ?? []).length === 0) ||
      (p.needsConfirmation && !this.#confirm.checked);
  }

  #showPreview(p: ApprovalPreview): void {
    if (this.#tools.childElementCount === 0) this.#chooser(p.choosable);
    this.#confirmRow.hidden = !p.needsConfirmation;
    const entries = p.entries;
    replace(
      this.#plan,
      h('h2', {}, entries.length === 0 ? 'Nothing changes' : `What changes (${entries.length})`),
      entries.length === 0
        ? h(
            'p',
            {},
            p.changesSpec
              ? 'Only the form of the baseline changes.'
              : 'The baseline is already this one.',
          )
        : h('ul', { class: 'plan' }, ...entries.map(entryItem)),
      p.leftOut.length === 0
        ? undefined
        : h(
            'p',
            { class: 'notice' },
            "Left out, their names break MCP's tool-name rules: ",
            ...p.leftOut.flatMap((name, i) => [
              i === 0 ? '' : ', ',
              h('code', { class: 'server' }, serverText(name)),
            ]),
          ),
      h(
        'p',
        {},
        'Recorded as approved by ',
        h('strong', { id: 'approve-by' }, p.approvedBy),
        ` from snapshot `,
        h('code', {}, p.snapshotDigest),
        '.',
      ),
      h('h3', {}, 'Written to spec.tools.approved'),
      h(
        'pre',
        {
          class: 'preview text server',
          id: 'approve-written',
          tabindex: 0,
          role: 'region',
          aria: { label: 'spec.tools.approved as written' },
        },
        serverText(JSON.stringify(p.approved, null, 2)),
      ),
    );
  }

  #chooser(choosable: string[]): void {
    replace(
      this.#tools,
      h('legend', {}, 'Tools'),
      ...(choosable.length === 0
        ? [h('p', { class: 'small' }, 'No tool changed: there is nothing to choose.')]
        : choosable.map((name, i) => {
            const id = `approve-tool-${i}`;
            const box = h('input', {
              type: 'checkbox',
              id,
              value: name,
              checked: true,
              disabled: true,
            });
            box.addEventListener('change', () => this.#later());
            return h(
              'p',
              {},
              box,
              ' ',
              h('label', { for: id }, h('code', { class: 'server' }, serverText(name))),
            );
          })),
    );
  }

  async #approve(): Promise<void> {
    const p = this.#preview;
    if (p === undefined) return;
    this.#apply.disabled = true;
    replace(this.#outcome);
    const { row } = this.#review;
    const request: ApprovalRequest = {
      ...this.#request(),
      resourceVersion: p.resourceVersion,
      confirmed: this.#confirm.checked,
    };
    try {
      this.#done(
        await postJson<ApprovalResult>(serverPath(row.namespace, row.name, '/approve'), request),
      );
    } catch (error) {
      if (error instanceof ApiFailure && error.code === 'MCPOP_APPROVAL_STALE') this.#stale();
      else this.#failed(`Nothing was written: ${message(error)}`, 'approve-failed');
    }
  }

  /** The preview no longer shows the server as it is: nothing can be approved from it. */
  #stale(): void {
    this.#preview = undefined;
    this.#failed(
      'The server changed since this preview (a new discovery, an edit or another approval). Nothing was written. Preview again and review what it shows now.',
      'approve-stale',
    );
  }

  #failed(text: string, id: string): void {
    const again = h('button', { type: 'button', id: 'approve-again' }, 'Preview again');
    again.addEventListener('click', () => {
      replace(this.#outcome);
      void this.#ask();
    });
    replace(this.#outcome, h('p', { class: 'notice error', id }, text), again);
    again.focus();
    this.#ready();
  }
}

function entryItem(e: PlannedEntry): HTMLElement {
  return h(
    'li',
    { dataset: { entry: `${e.kind}:${e.name}` } },
    `${e.kind} `,
    e.from === undefined ? undefined : h('code', { class: 'server' }, serverText(e.from)),
    e.from === undefined ? undefined : ' → ',
    h('code', { class: 'server' }, serverText(e.name)),
    ' ',
    e.similarity === undefined ? undefined : `${e.similarity}% similar `,
    badge(
      e.change,
      e.change === 'removed' ? 'removed' : e.change === 'added' ? 'added' : 'changed',
    ),
    badge(e.severity, e.severity),
    e.fields.length === 0 ? undefined : h('span', { class: 'small' }, ` ${e.fields.join(', ')}`),
    ...e.findings.map((f) => h('p', {}, badge('finding', 'warn'), ' ', serverText(f))),
    ...e.texts.map((t) => {
      const text = t.after ?? '';
      // A long text scrolls in its box; the box takes focus so that the keyboard can scroll it.
      const scrolls =
        text.length > SCROLLS_PAST
          ? { tabindex: 0, role: 'region', aria: { label: `${t.field} of ${e.name}, scrollable` } }
          : {};
      return h(
        'div',
        { class: 'small' },
        `${t.field}: `,
        h('div', { class: 'text server', ...scrolls }, serverText(text)),
      );
    }),
  );
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
