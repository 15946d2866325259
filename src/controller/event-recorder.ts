/**
 * Records core/v1 Events on MCPServers (what `kubectl describe mcps` shows), aggregated the way
 * client-go's EventCorrelator does: a repeat of the same type, reason and message on the same
 * object bumps `count` and `lastTimestamp` of the existing Event instead of creating another.
 * Recording is best effort: a failure is logged and never fails a reconcile.
 * https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/event-v1/
 *
 * A reconcile pass does not wait for its Events: a few are sent at a time, the rest wait their
 * turn, and beyond a backlog new ones are dropped, as client-go's event broadcaster drops when
 * its queue of 1000 is full. While thousands of servers converge, Events then neither hold a
 * worker nor take the connections that the objects and status writes need.
 */
import type { Logger } from 'pino';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { EVENT, collectionPath, objectPath, type KubeObject } from '../kube/resources.ts';
import { metaTime } from '../api/core-v1.ts';
import { shown } from '../tools/text.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  client: KubeClient;
  /** `reportingComponent` / `source.component`. */
  component: string;
  /** `reportingInstance`: which replica of the operator. */
  instance: string;
  log: Logger;
}

interface Seen {
  namespace: string;
  name: string;
  count: number;
}

/** Events this recorder remembers for aggregation; older ones are forgotten first. */
const MEMORY = 4096;
/** Messages beyond this are cut: an Event is for a human, not a log (and for a terminal). */
const MAX_MESSAGE = 1024;
/** Events sent at once. */
const SENDING = 4;
/** Events waiting to be sent; more are dropped (client-go: maxQueuedEvents = 1000). */
const BACKLOG = 1000;

export class EventRecorder {
  readonly #o: EventRecorderOptions;
  readonly #seen = new Map<string, Seen>();
  /** The send under way for each key: a second one of the same Event waits to bump it. */
  readonly #sendingByKey = new Map<string, Promise<void>>();
  readonly #waiting: (() => void)[] = [];
  #sending = 0;
  #dropped = 0;

  constructor(options: EventRecorderOptions) {
    this.#o = options;
  }

  /** Records an Event; settles once it was sent (or dropped), never rejects. */
  async record(
    target: KubeObject,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    if (this.#sending >= SENDING) {
      if (this.#waiting.length >= BACKLOG) {
        this.#dropped += 1;
        // Once per full backlog, not once per Event: the log must not grow with the flood.
        if (this.#dropped % BACKLOG === 1) {
          this.#o.log.warn({ dropped: this.#dropped, reason }, 'too many events; dropping');
        }
        return;
      }
      // The slot is handed over by the send that ends (below).
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#sending += 1;
    }
    try {
      await this.#send(target, type, reason, message);
    } finally {
      const next = this.#waiting.shift();
      if (next === undefined) this.#sending -= 1;
      else next();
    }
  }

  async #send(target: KubeObject, type: EventType, reason: string, message: string) {
    const text = shown(message, MAX_MESSAGE);
    const key = [target.metadata.uid, type, reason, text].join('\u0000');
    // Two passes may record the same Event before the first create is answered; sent side by
    // side, both would create one, and a user would see it twice instead of with count 2.
    const earlier = this.#sendingByKey.get(key);
    const send = (async () => {
      await earlier;
      await this.#createOrBump(key, target, type, reason, text);
    })();
    this.#sendingByKey.set(key, send);
    try {
      await send;
    } finally {
      if (this.#sendingByKey.get(key) === send) this.#sendingByKey.delete(key);
    }
  }

  async #createOrBump(
    key: string,
    target: KubeObject,
    type: EventType,
    reason: string,
    text: string,
  ): Promise<void> {
    try {
      const seen = this.#seen.get(key);
      if (seen !== undefined && (await this.#bump(key, seen))) return;
      await this.#create(key, target, type, reason, text);
    } catch (err) {
      this.#o.log.warn({ err, reason }, 'could not record an event');
    }
  }

  /** Counts one more occurrence on the existing Event; false when it has expired meanwhile. */
  async #bump(key: string, seen: Seen): Promise<boolean> {
    seen.count += 1;
    try {
      await this.#o.client.request({
        method: 'PATCH',
        patchType: 'merge',
        path: objectPath(EVENT, seen.namespace, seen.name),
        body: { count: seen.count, lastTimestamp: metaTime(new Date()) },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.#seen.delete(key);
      return false;
    }
    this.#remember(key, seen);
    return true;
  }

  async #create(
    key: string,
    target: KubeObject,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const { component, instance, client } = this.#o;
    const namespace = target.metadata.namespace ?? 'default';
    const objectName = target.metadata.name ?? '';
    // client-go's naming: the object's name and a timestamp in hex, unique per occurrence.
    const name = `${objectName}.${(Date.now() * 1000 + Math.floor(Math.random() * 1000)).toString(16)}`;
    const now = metaTime(new Date());
    await client.request({
      method: 'POST',
      path: collectionPath(EVENT, namespace),
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: target.apiVersion,
          kind: target.kind,
          name: objectName,
          namespace,
          uid: target.metadata.uid,
        },
        type,
        reason,
        message,
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component },
        reportingComponent: component,
        reportingInstance: instance,
      },
    });
    this.#remember(key, { namespace, name, count: 1 });
  }

  #remember(key: string, seen: Seen): void {
    this.#seen.delete(key);
    this.#seen.set(key, seen);
    if (this.#seen.size > MEMORY) this.#seen.delete(this.#seen.keys().next().value!);
  }
}
