/**
 * What the console keeps in step with the API server, as the user: the MCPServers (as much of
 * each as its fleet row reads, and the row), the Events about them, and the snapshot
 * ConfigMaps' metadata (the server page reads a server and its snapshot when it is opened). One reflector
 * per kind and namespace (src/kube/informer.ts), so a change reaches the page from a watch,
 * not from polling.
 */

import type { Logger } from 'pino';
import { KIND, LABEL_SNAPSHOT } from '../api/names.ts';
import { ConditionType } from '../api/v1alpha1/conditions.ts';
import { MCP_SERVER, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import type { KubeClient } from '../kube/client.ts';
import { Informer } from '../kube/informer.ts';
import type { Change } from '../kube/reflector.ts';
import { CONFIG_MAP, EVENT, objectKey, type KubeObject } from '../kube/resources.ts';
import { fleetRow } from './fleet-row.ts';
import type { FleetRow, StreamMessage } from './web/api-types.ts';

/** An Event about an MCPServer, as much of it as the timeline shows. */
export interface ConsoleEvent extends KubeObject {
  involvedObject: { name?: string; namespace?: string; uid?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
}

/**
 * Events kept per server: the timeline shows the latest; a server whose Events the operator
 * records in a loop cannot grow the console's memory without bound.
 */
export const EVENTS_PER_SERVER = 50;

/** Keeps of an Event only what the timeline shows. */
function slimEvent(event: ConsoleEvent): ConsoleEvent {
  const { metadata, involvedObject, type, reason, message, count } = event;
  return {
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      resourceVersion: metadata.resourceVersion,
    },
    involvedObject: { name: involvedObject.name, namespace: involvedObject.namespace },
    type,
    reason,
    message,
    count,
    firstTimestamp: event.firstTimestamp,
    lastTimestamp: event.lastTimestamp,
    eventTime: event.eventTime,
  };
}

/**
 * Keeps of an MCPServer what its fleet row reads (fleet-row.ts); the server page reads the
 * object itself, as the user, when it is opened. Everything else would cost the console memory
 * per server for nothing the fleet shows: the approved baseline (which can hold every tool's
 * full definition), status.discovery's digests of every tool, the other conditions, the
 * annotations (kubectl's last-applied copy of the spec among them).
 */
export function rowSource(server: StoredMCPServer): StoredMCPServer {
  const { metadata, spec, status } = server;
  const discovery = status?.discovery;
  return {
    apiVersion: server.apiVersion,
    kind: server.kind,
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
    },
    spec: { url: spec.url, transport: spec.transport },
    status:
      status === undefined
        ? undefined
        : {
            conditions: status.conditions?.filter((c) => ROW_CONDITIONS.has(c.type)),
            discovery:
              discovery === undefined
                ? undefined
                : {
                    toolCount: discovery.toolCount,
                    prompts: discovery.prompts,
                    resources: discovery.resources,
                    resourceTemplates: discovery.resourceTemplates,
                    findingCount: discovery.findingCount,
                    lastSuccessTime: discovery.lastSuccessTime,
                  },
            drift: status.drift,
            provenance:
              status.provenance?.codeChanged === undefined
                ? undefined
                : { codeChanged: status.provenance.codeChanged },
          },
  };
}

/**
 * Objects per page of the first list: each page is held whole, as text and parsed, before
 * rowSource slims it, so smaller pages keep the console's peak memory down at a thousand servers.
 */
const LIST_PAGE_SIZE = 100;

const ROW_CONDITIONS = new Set<string>([ConditionType.Ready, ConditionType.Drifted]);

export interface WatchOptions {
  client: KubeClient;
  /** Empty: every namespace. */
  namespaces: readonly string[];
  /** Whether the user may list and watch Events, and snapshot ConfigMaps, in that scope. */
  events: boolean;
  snapshots: boolean;
  log: Logger;
}

/** The console's caches and a feed of what changed in them. */
export class ConsoleWatch {
  readonly #servers: Informer<StoredMCPServer>;
  readonly #events: Informer<ConsoleEvent> | undefined;
  readonly #snapshots: Informer<KubeObject> | undefined;
  readonly #rows = new Map<string, FleetRow>();
  readonly #listeners = new Set<(message: StreamMessage) => void>();

  constructor(o: WatchOptions) {
    const common = { client: o.client, namespaces: o.namespaces, log: o.log };
    this.#servers = new Informer<StoredMCPServer>({
      ...common,
      resource: MCP_SERVER,
      transform: rowSource,
      pageSize: LIST_PAGE_SIZE,
      onChange: (change) => this.#onServer(change),
    });
    this.#events = o.events
      ? new Informer<ConsoleEvent>({
          ...common,
          resource: EVENT,
          fieldSelector: `involvedObject.kind=${KIND}`,
          transform: slimEvent,
          indexers: { server: (e) => [involved(e)] },
          onChange: ({ object }) => this.#touch(involved(object)),
        })
      : undefined;
    this.#snapshots = o.snapshots
      ? new Informer<KubeObject>({
          ...common,
          resource: CONFIG_MAP,
          labelSelector: LABEL_SNAPSHOT,
          metadataOnly: true,
          onChange: ({ object }) => this.#touch(ownerKey(object)),
        })
      : undefined;
  }

  async start(): Promise<void> {
    const informers = [this.#servers, this.#events, this.#snapshots].filter((i) => i !== undefined);
    for (const informer of informers) informer.start();
    await Promise.all(informers.map((informer) => informer.waitForSync()));
  }

  async stop(): Promise<void> {
    const informers = [this.#servers, this.#events, this.#snapshots];
    await Promise.all(informers.filter((i) => i !== undefined).map((i) => i.stop()));
  }

  /** Every row, in no particular order: the page sorts. */
  rows(): FleetRow[] {
    return [...this.#rows.values()];
  }

  /** The latest Events about a server, newest last. */
  events(namespace: string, name: string): ConsoleEvent[] {
    const events = this.#events?.store.byIndex('server', objectKey(namespace, name)) ?? [];
    return events
      .sort((a, b) => eventTime(a).localeCompare(eventTime(b)))
      .slice(-EVENTS_PER_SERVER);
  }

  /** Calls `listener` with every change until the returned function is called. */
  subscribe(listener: (message: StreamMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #onServer(change: Change<StoredMCPServer>): void {
    const key = objectKey(change.object.metadata.namespace, change.object.metadata.name);
    if (change.type === 'deleted') {
      this.#rows.delete(key);
      this.#emit({ type: 'delete', key });
      return;
    }
    const row = fleetRow(change.object);
    this.#rows.set(key, row);
    this.#emit({ type: 'upsert', row });
  }

  #touch(key: string | undefined): void {
    if (key !== undefined) this.#emit({ type: 'touch', key });
  }

  #emit(message: StreamMessage): void {
    for (const listener of this.#listeners) listener(message);
  }
}

function involved(event: ConsoleEvent): string {
  return objectKey(
    event.involvedObject.namespace ?? event.metadata.namespace,
    event.involvedObject.name ?? '',
  );
}

const eventTime = (e: ConsoleEvent) => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? '';

/** The MCPServer a snapshot ConfigMap belongs to: its controller owner. */
function ownerKey(configMap: KubeObject): string | undefined {
  const owner = configMap.metadata.ownerReferences?.find((ref) => ref.kind === KIND);
  return owner === undefined ? undefined : objectKey(configMap.metadata.namespace, owner.name);
}
