/**
 * `subscriptions/listen` of revision 2026-07-28 (basic/patterns/subscriptions) over a child of
 * the handshake era: a long-lived SSE response that carries the change notifications the client
 * opted in to, each tagged with the subscription id. Resource subscriptions become
 * `resources/subscribe` requests to the child (shared with other listeners by the upstream).
 *
 * A child that speaks 2026-07-28 sends change notifications only on a `subscriptions/listen`
 * stream of its own: the bridge holds one per child (ChildSubscription), opted in to every
 * list change, and each listener picks what its client asked for.
 */

import type { ServerResponse } from 'node:http';
import {
  isNotification,
  isRequest,
  errorResponse,
  WIRE,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type RequestId,
} from '../../mcp/jsonrpc.ts';
import { META } from '../../mcp/metadata.ts';
import { LIST_CHANGED, type SubscriptionFilter } from '../../mcp/methods.ts';
import { ownValue } from '../../mcp/untrusted.ts';
import { SSE_HEADERS } from './sse.ts';
import type { SessionPort, Upstream } from '../upstream.ts';
import type { Account } from '../budget.ts';
import type { Caller } from '../identity.ts';

const KEEP_ALIVE_MS = 15_000;
const EVERY_LIST_CHANGE = {
  toolsListChanged: true,
  promptsListChanged: true,
  resourcesListChanged: true,
};
let nextListener = 0;

/** The part of the filter the child can honour, judged by the capabilities it declared. */
export type Capabilities = Record<
  string,
  { listChanged?: boolean; subscribe?: boolean } | undefined
>;

/**
 * The most distinct resource URIs one listen may subscribe to. Each becomes a request to the
 * child (a POST to an HTTP upstream), so one request could otherwise cause thousands.
 */
export const MAX_RESOURCE_SUBSCRIPTIONS = 64;

/** The distinct string URIs a listen asks to subscribe to, in their order. */
export function resourceSubscriptionsOf(request: JsonRpcRequest): string[] {
  const notifications = request.params?.notifications as SubscriptionFilter | undefined;
  const uris: unknown = notifications?.resourceSubscriptions;
  if (!Array.isArray(uris)) return [];
  return [...new Set(uris.filter((uri): uri is string => typeof uri === 'string'))];
}

function honoured(
  requested: SubscriptionFilter,
  uris: string[],
  capabilities: Capabilities,
): SubscriptionFilter {
  const filter: SubscriptionFilter = {};
  if (requested.toolsListChanged && capabilities.tools?.listChanged) filter.toolsListChanged = true;
  if (requested.promptsListChanged && capabilities.prompts?.listChanged)
    filter.promptsListChanged = true;
  if (requested.resourcesListChanged && capabilities.resources?.listChanged)
    filter.resourcesListChanged = true;
  if (uris.length > 0 && capabilities.resources?.subscribe) filter.resourceSubscriptions = uris;
  return filter;
}

/** Answers a request of the child that reached a port with no client request to ask. */
export function refuseUnrelated(
  upstream: Upstream,
  port: SessionPort,
  request: JsonRpcRequest,
): void {
  upstream.fromClient(
    port,
    errorResponse(request.id, WIRE.METHOD_NOT_FOUND, 'No client request is waiting for this'),
  );
}

/** After a lost subscription, the first wait before the bridge opens a new one; it doubles. */
const RESUBSCRIBE_MS = 1_000;
const MAX_RESUBSCRIBE_MS = 30_000;

/**
 * The bridge's own subscription on a child that speaks 2026-07-28, open while the bridge or any
 * listener needs it. The bridge needs it for as long as the child runs: the policy and the
 * change feed hear of a changed list only through it. One that ends while still needed (the
 * child, or a broken HTTP stream, ended it) is opened again, and since notifications may have
 * been missed in between, every list is taken as changed.
 */
class ChildSubscription implements SessionPort {
  readonly id = `child-listen-${nextListener++}`;
  readonly clientCapabilities = {};
  readonly #upstream: Upstream;
  readonly #meta: Record<string, unknown>;
  #listeners = 0;
  #open = false;
  #retryMs = RESUBSCRIBE_MS;
  #retry: NodeJS.Timeout | undefined;

  constructor(upstream: Upstream, meta: Record<string, unknown>) {
    this.#upstream = upstream;
    this.#meta = meta;
  }

  join(): void {
    this.#listeners++;
    if (!this.#open && !this.#retry) this.#subscribe();
  }

  /** The last listener gone: detaching cancels the subscription in the child. */
  leave(): void {
    this.#listeners--;
    if (this.#listeners > 0) return;
    this.#open = false;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#upstream.detach(this);
  }

  deliver(message: JsonRpcMessage): void {
    if (isRequest(message)) return refuseUnrelated(this.#upstream, this, message);
    if (isNotification(message)) {
      if (message.method === 'notifications/subscriptions/acknowledged')
        this.#retryMs = RESUBSCRIBE_MS;
      return;
    }
    this.#open = false;
    if (this.#listeners === 0 || this.#upstream.isClosed) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#listeners === 0 || this.#upstream.isClosed) return;
      this.#subscribe();
      this.#upstream.assumeListsChanged();
    }, this.#retryMs);
    this.#retry.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RESUBSCRIBE_MS);
  }

  upstreamClosed(): void {
    this.#open = false;
    clearTimeout(this.#retry);
    this.#retry = undefined;
  }

  #subscribe(): void {
    this.#open = true;
    this.#upstream.attach(this);
    this.#upstream.fromClient(this, {
      jsonrpc: '2.0',
      id: 0,
      method: 'subscriptions/listen',
      params: { notifications: EVERY_LIST_CHANGE, _meta: this.#meta },
    });
  }
}

const childSubscriptions = new WeakMap<Upstream, ChildSubscription>();

function childSubscription(upstream: Upstream, meta: Record<string, unknown>): ChildSubscription {
  let subscription = childSubscriptions.get(upstream);
  if (!subscription) {
    subscription = new ChildSubscription(upstream, meta);
    childSubscriptions.set(upstream, subscription);
  }
  return subscription;
}

/**
 * The bridge's own subscription on a child that speaks 2026-07-28 and may announce list
 * changes, held for as long as the child runs. `meta`: the `_meta` of the bridge's requests.
 */
export function holdChildSubscription(
  upstream: Upstream,
  capabilities: Capabilities,
  meta: Record<string, unknown>,
): void {
  const announces = ['tools', 'prompts', 'resources'].some(
    (kind) => capabilities[kind]?.listChanged === true,
  );
  if (announces) childSubscription(upstream, meta).join();
}

export class Listener implements SessionPort {
  readonly id = `listen-${nextListener++}`;
  /** Holds the listen's own bytes, and those of the subscriptions it sends while in flight. */
  readonly account: Account;
  /** A subscription stream answers no requests of the child (deliver refuses them). */
  readonly clientCapabilities = {};
  readonly #upstream: Upstream;
  readonly #res: ServerResponse;
  readonly #subscriptionId: RequestId;
  readonly #filter: SubscriptionFilter;
  readonly #keepAlive: NodeJS.Timeout;
  /** The `_meta` of the bridge's subscription on a child that speaks 2026-07-28. */
  readonly #nativeMeta: Record<string, unknown> | undefined;
  /** Who opened the listen: the subscriptions it sends are theirs. */
  readonly #caller: Caller | undefined;
  #childSubscription: ChildSubscription | undefined;
  #closed = false;

  constructor(
    upstream: Upstream,
    request: JsonRpcRequest,
    res: ServerResponse,
    capabilities: Capabilities,
    account: Account,
    caller: Caller | undefined,
    nativeMeta?: Record<string, unknown>,
  ) {
    this.#upstream = upstream;
    this.#caller = caller;
    this.#nativeMeta = nativeMeta;
    this.#res = res;
    this.#subscriptionId = request.id;
    this.account = account;
    this.#filter = honoured(
      request.params?.notifications ?? {},
      resourceSubscriptionsOf(request),
      capabilities,
    );
    // The bridge's one subscription on a child of 2026-07-28 is for list changes; resource
    // updates are not offered, so the acknowledgment does not promise them.
    if (nativeMeta) delete this.#filter.resourceSubscriptions;
    this.#keepAlive = setInterval(() => res.write(':\n\n'), KEEP_ALIVE_MS);
    this.#keepAlive.unref();
    res.once('close', () => this.#stop());
  }

  /** Opens the stream: the acknowledgment must come before any notification. */
  start(): void {
    this.#res.writeHead(200, SSE_HEADERS);
    this.#send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: this.#filter },
    });
    this.#upstream.attach(this);
    if (this.#nativeMeta) {
      this.#childSubscription = childSubscription(this.#upstream, this.#nativeMeta);
      this.#childSubscription.join();
      return;
    }
    (this.#filter.resourceSubscriptions ?? []).forEach((uri, i) => {
      const subscribe: JsonRpcRequest = {
        jsonrpc: '2.0',
        id: i,
        method: 'resources/subscribe',
        params: { uri },
      };
      const bytes = Buffer.byteLength(JSON.stringify(subscribe));
      this.#upstream.fromClient(this, subscribe, bytes, this.#caller);
    });
  }

  deliver(message: JsonRpcMessage): void {
    // Not ours to answer: input requests only reach the request that caused them.
    if (isRequest(message)) return refuseUnrelated(this.#upstream, this, message);
    if (!isNotification(message) || !this.#wants(message)) return;
    this.#send(message);
  }

  upstreamClosed(): void {
    this.close();
  }

  /** Ends the subscription gracefully: a final response, then the end of the stream. */
  close(): void {
    if (this.#closed) return;
    const result = {
      resultType: 'complete',
      _meta: { [META.subscriptionId]: this.#subscriptionId },
    };
    this.#res.end(
      `data: ${JSON.stringify({ jsonrpc: '2.0', id: this.#subscriptionId, result })}\n\n`,
    );
    this.#stop();
  }

  #wants(notification: JsonRpcNotification): boolean {
    const flag = ownValue(LIST_CHANGED, notification.method);
    if (flag) return this.#filter[flag] === true;
    if (notification.method !== 'notifications/resources/updated') return false;
    return (
      this.#filter.resourceSubscriptions?.includes(notification.params?.uri as string) ?? false
    );
  }

  #send(notification: JsonRpcNotification): void {
    const meta = {
      ...(notification.params?._meta as object | undefined),
      [META.subscriptionId]: this.#subscriptionId,
    };
    const tagged = { ...notification, params: { ...notification.params, _meta: meta } };
    this.#res.write(`data: ${JSON.stringify(tagged)}\n\n`);
  }

  #stop(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepAlive);
    this.#upstream.detach(this);
    this.#childSubscription?.leave();
  }
}
