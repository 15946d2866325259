/**
 * The page's entry point: a router over the URL's fragment (`#/`, `#/server/<ns>/<name>`,
 * `#/approve/<ns>/<name>`),
 * the session, and one live stream whose messages go to the page on
 * show. Each route's page loads what it shows through the JSON API and redraws on changes.
 */

import type { ApprovalResult, StreamMessage } from './api-types.ts';
import { ApiFailure, currentSession } from './api.ts';
import { h, replace } from './dom.ts';
import { FleetPage } from './fleet.ts';
import { ApprovePage } from './approve-page.ts';
import { loadReview, renderServer } from './server-page.ts';

interface Page {
  /** A message from the stream. */
  apply(message: StreamMessage): void;
  /** The stream (re)connected: what the page shows may be stale. */
  reload(): Promise<void>;
}

/** How long a page waits for the live stream before it loads without it. */
const STREAM_WAIT_MS = 2000;

const main = document.getElementById('main')!;
const live = document.getElementById('live')!;
let page: Page | undefined;
/** Bumped on every navigation, so a slow answer for a page left behind draws nothing. */
let generation = 0;
/**
 * Stream messages that came while a page was loading, given to it once it shows: it loaded
 * what it shows after the stream was connected, so these are the only changes it may lack.
 */
let early: StreamMessage[] | undefined = [];
/** More than this many while a page loads, and it loads again instead. */
const EARLY_MAX = 5000;
let overflowed = false;
/** Resolves on the stream's first hello: pages load after it, so that no change falls between. */
let connected: () => void = () => undefined;
const streaming = new Promise<void>((resolve) => {
  connected = resolve;
  // A stream that cannot connect must not hold up the page: it shows, not live.
  window.setTimeout(resolve, STREAM_WAIT_MS);
});

function route(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent);
}

async function navigate(): Promise<void> {
  const mine = ++generation;
  const [view, namespace, name] = route();
  early = [];
  overflowed = false;
  await streaming;
  try {
    if (view === 'server' && namespace !== undefined && name !== undefined) {
      page = await serverPage(namespace, name, mine);
    } else if (view === 'approve' && namespace !== undefined && name !== undefined) {
      page = await approvePage(namespace, name, mine);
    } else {
      const fleet = new FleetPage();
      await fleet.show(main);
      page = fleet;
    }
  } catch (error) {
    if (mine === generation) showError(error);
  }
  if (mine !== generation) return;
  const missed = early ?? [];
  early = undefined;
  if (overflowed) void page?.reload().catch(showError);
  else for (const message of missed) page?.apply(message);
}

async function serverPage(namespace: string, name: string, mine: number): Promise<Page> {
  const key = `${namespace}/${name}`;
  const flash = approved;
  approved = undefined;
  const draw = async () => {
    const review = await loadReview(namespace, name);
    if (mine !== generation) return;
    const focused = document.activeElement?.id;
    renderServer(main, review, flash);
    if (focused) document.getElementById(focused)?.focus();
  };
  await draw();
  document.title = `${name} — mcp-operator console`;
  return debounced(key, draw);
}

/**
 * The approval just written, shown once on the server page it returns to: that page's drift
 * then changes live, as the operator compares the snapshot with the new baseline.
 */
let approved: ApprovalResult | undefined;

async function approvePage(namespace: string, name: string, mine: number): Promise<Page> {
  const review = await loadReview(namespace, name);
  const approve = new ApprovePage(review, (result) => {
    approved = result;
    location.hash = `#/server/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  });
  if (mine === generation) await approve.show(main);
  document.title = `Approve ${name} — mcp-operator console`;
  return approve;
}

/** A page that redraws (at most every 250 ms) when its server changes. */
function debounced(key: string, draw: () => Promise<void>): Page {
  let timer: number | undefined;
  const later = () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => void draw().catch(showError), 250);
  };
  return {
    apply(message) {
      if (
        (message.type === 'upsert' && message.row.key === key) ||
        (message.type !== 'upsert' && message.key === key)
      )
        later();
    },
    reload: draw,
  };
}

function showError(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const reload = error instanceof ApiFailure && error.status === 401;
  replace(
    main,
    h('h1', {}, 'Something went wrong'),
    h('p', { class: 'notice', role: 'alert' }, message),
    reload
      ? h('p', {}, 'Open the console with the URL it printed.')
      : h('p', {}, h('a', { href: '#/' }, 'Back to all servers')),
  );
}

function connect(): void {
  const stream = new EventSource('/api/stream');
  // On every (re)connect: changes may have been missed while the stream was down.
  let first = true;
  stream.addEventListener('hello', () => {
    live.textContent = 'live';
    live.className = 'live on';
    if (first) {
      first = false;
      connected();
    } else void page?.reload().catch(showError);
  });
  stream.addEventListener('message', (event: MessageEvent<string>) => {
    const message = JSON.parse(event.data) as StreamMessage;
    if (early === undefined) page?.apply(message);
    else if (early.length < EARLY_MAX) early.push(message);
    else overflowed = true;
  });
  stream.addEventListener('error', () => {
    live.textContent = 'reconnecting…';
    live.className = 'live off';
  });
}

async function start(): Promise<void> {
  window.addEventListener('hashchange', () => {
    void navigate();
    main.focus();
  });
  connect();
  await Promise.all([showSession(), navigate()]);
}

async function showSession(): Promise<void> {
  const session = await currentSession();
  const who = document.getElementById('who')!;
  who.textContent = `${session.user ?? 'unknown user'} · ${session.context || 'in-cluster'} · ${session.namespaces.length === 0 ? 'all namespaces' : session.namespaces.join(', ')}`;
  for (const limit of session.limits) main.before(h('p', { class: 'notice' }, limit));
}

void start().catch(showError);
