/**
 * One discovery run for one MCPServer, as the scheduler calls it: read the bearer token from
 * the Secret in spec.auth, and for an enforced stdio server the discovery token from its
 * `<name>-discovery` Secret (a GET at each run; never logged, never in status), discover the
 * server's endpoint, store the full snapshot in its ConfigMap (server-side apply, only when the
 * content changed), record the result and enqueue the server so that the reconcile pass writes
 * status from it.
 *
 * A failure is recorded with a reason and a message that say what to check, then rethrown so
 * that the scheduler backs off and counts it.
 */

import { alarmLevelOf, countByLevel } from '../tools/text-findings.ts';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { DiscoveredReason } from '../api/v1alpha1/conditions.ts';
import { DISCOVERY_TOKEN_KEY } from '../api/v1alpha1/stored.ts';
import { DEFAULTS } from '../api/v1alpha1/defaults.ts';
import { OAUTH_CLIENT_ID_KEY, OAUTH_CLIENT_SECRET_KEY } from '../api/v1alpha1/oauth.ts';
import { OAuthTokenCache } from './oauth-token-cache.ts';
import type { DriftSeverity } from '../api/v1alpha1/mcpserver.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { SECRET, objectPath, type KubeObject } from '../kube/resources.ts';
import { needsDiscoveryToken } from '../api/v1alpha1/spec.ts';
import { objectNames, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { OperatorError, operatorError } from '../errors.ts';
import type { BaselineResolver } from './baseline.ts';
import { discover } from './client.ts';
import { type Drift, serverDriftSeverity } from '../tools/drift.ts';
import { driftBasis, driftFrom, driftInputs } from './drift-basis.ts';
import { sentence } from '../tools/format.ts';
import { displayUrl } from './http.ts';
import type { Failure, ResultStore, StoredSnapshot } from './results.ts';
import type { RunOutcome } from './scheduler.ts';
import { type Snapshot, compactStatus, takeSnapshot } from '../tools/snapshot.ts';
import { CONFIGMAP_LIMIT_BYTES, snapshotConfigMap } from './snapshot-configmap.ts';
import { peerToolNames } from './peer-tools.ts';
import { timeoutMs } from '../api/v1alpha1/spec.ts';
import { MESSAGE_MAX, shown } from '../tools/text.ts';

export type ConfigMapObject = KubeObject & { data?: Record<string, string> };

/**
 * The one Kubernetes write discovery makes, supplied by the controller (which owns the labels,
 * owner reference and field manager of what the operator writes).
 */
export interface SnapshotWriter {
  /** Stores `data` in the server's ConfigMap `name` unless it already holds it; true if it wrote. */
  write(server: StoredMCPServer, name: string, data: Record<string, string>): Promise<boolean>;
}

export interface RunnerOptions {
  client: KubeClient;
  /** Opens discovery's connections, through the egress guard (egress.ts). */
  dispatcher: Dispatcher;
  /** The MCPServer as cached. */
  server: (key: string) => StoredMCPServer | undefined;
  /** The cached MCPServers of a namespace: whose tools a description may shadow. */
  peers?: (namespace: string) => readonly StoredMCPServer[];
  snapshots: SnapshotWriter;
  /** Where the MCP endpoint of a server is. */
  endpoint: (server: StoredMCPServer) => string;
  results: ResultStore;
  baselines: BaselineResolver;
  /** Asks for a reconcile pass, which writes status from the result. */
  enqueue: (key: string) => void;
  log: Logger;
}

/** Failures with a reason of their own; any other is `Failed`, its message telling the rest. */
const REASONS: Partial<Record<string, DiscoveredReason>> = {
  MCPOP_DISCOVERY_AUTH_SECRET: DiscoveredReason.AuthSecretMissing,
  MCPOP_DISCOVERY_UNAUTHORIZED: DiscoveredReason.Unauthorized,
  MCPOP_DISCOVERY_OAUTH: DiscoveredReason.OAuthTokenFailed,
  MCPOP_DISCOVERY_TIMEOUT: DiscoveredReason.TimedOut,
  MCPOP_DISCOVERY_EGRESS_DENIED: DiscoveredReason.EgressDenied,
  MCPOP_DISCOVERY_INVALID_RESULT: DiscoveredReason.InvalidAnswer,
  MCPOP_DISCOVERY_BAD_RESPONSE: DiscoveredReason.InvalidAnswer,
  MCPOP_DISCOVERY_RPC_ERROR: DiscoveredReason.InvalidAnswer,
};

export class DiscoveryRunner {
  readonly #o: RunnerOptions;
  readonly #oauthTokens = new OAuthTokenCache();

  constructor(options: RunnerOptions) {
    this.#o = options;
  }

  async run(key: string, signal: AbortSignal): Promise<RunOutcome> {
    const server = this.#o.server(key);
    if (server === undefined) throw operatorError('MCPOP_DISCOVERY_CANCELLED', key);
    const generation = server.metadata.generation ?? 0;
    const url = this.#o.endpoint(server);
    const at = new Date();
    try {
      const snapshot = await this.#discover(server, url, signal);
      const stored = await this.#store(server, snapshot);
      signal.throwIfAborted();
      const drift = await this.#drift(key, server, snapshot);
      this.#o.results.succeeded(key, generation, {
        at,
        url: displayUrl(url),
        found: compactStatus(snapshot),
        stored,
        drift: drift && { basis: drift.basis, drift: drift.drift },
        // Not in a ConfigMap to read again: kept whole (a tool set over 1 MiB is rare).
        ...(stored.fits ? {} : { listed: { tools: snapshot.tools, catalog: snapshot.catalog } }),
      });
      return {
        toolCount: snapshot.tools.length,
        drift: drift?.severity,
        textFindings: countByLevel(snapshot.textFindings),
        textFindingAlarm: alarmLevelOf(server.spec),
      };
    } catch (error) {
      if (!removed(signal)) this.#o.results.failed(key, generation, at, failureOf(error));
      throw error;
    } finally {
      if (!removed(signal)) this.#o.enqueue(key);
    }
  }

  async #discover(server: StoredMCPServer, url: string, signal: AbortSignal): Promise<Snapshot> {
    const token = await this.#token(server, signal);
    const discoveryToken = await this.discoveryToken(server, signal);
    try {
      return takeSnapshot(
        await discover({
          url,
          token,
          discoveryToken,
          timeoutMs: timeoutMs(server.spec),
          signal,
          dispatcher: this.#o.dispatcher,
        }),
        peerToolNames(server, this.#o.peers?.(server.metadata.namespace) ?? []),
      );
    } catch (error) {
      // The server refused the token (revoked, say): the next run asks the issuer again.
      const { oauth } = server.spec;
      if (oauth && error instanceof OperatorError && error.code === 'MCPOP_DISCOVERY_UNAUTHORIZED')
        this.#oauthTokens.forget(oauth.issuer, oauth.resource);
      throw error;
    }
  }

  /**
   * The token that lets discovery see past the bridge's policy (the `<name>-discovery` Secret
   * the controller creates for an enforced stdio server), read now; never logged, never in
   * status. Without it discovery would see only the approved tools and miss every drifted one,
   * so a missing one fails the run.
   */
  async discoveryToken(server: StoredMCPServer, signal: AbortSignal): Promise<string | undefined> {
    if (!needsDiscoveryToken(server)) return undefined;
    const { namespace } = server.metadata;
    const name = objectNames(server).discoverySecret;
    const secret = `${namespace}/${name}`;
    const data = await this.#secretData(namespace, name, 'MCPOP_DISCOVERY_TOKEN_SECRET', signal);
    const encoded = data?.[DISCOVERY_TOKEN_KEY];
    const token = Buffer.from(encoded ?? '', 'base64')
      .toString('utf8')
      .trim();
    if (token === '')
      throw operatorError('MCPOP_DISCOVERY_TOKEN_SECRET', secret, `has no ${DISCOVERY_TOKEN_KEY}`);
    return token;
  }

  /** The token from spec.auth.secretRef, read now: a rotated Secret is used at the next run. */
  async #token(server: StoredMCPServer, signal: AbortSignal): Promise<string | undefined> {
    if (server.spec.oauth) return this.#oauthToken(server, server.spec.oauth, signal);
    const ref = server.spec.auth?.secretRef;
    if (ref === undefined) return undefined;
    const { namespace } = server.metadata;
    const secret = `${namespace}/${ref.name}`;
    const key = ref.key ?? DEFAULTS.authKey;
    const data = await this.#secretData(namespace, ref.name, 'MCPOP_DISCOVERY_AUTH_SECRET', signal);
    const encoded = data?.[key];
    if (encoded === undefined) {
      throw operatorError('MCPOP_DISCOVERY_AUTH_SECRET', secret, `has no key ${key}`);
    }
    // Trimmed as the bridge trims the same token (src/bridge/auth/bearer.ts): a file written with echo ends in a newline.
    const token = Buffer.from(encoded, 'base64').toString('utf8').trim();
    if (token === '')
      throw operatorError('MCPOP_DISCOVERY_AUTH_SECRET', secret, `has an empty ${key}`);
    return token;
  }

  /**
   * An access token of the client-credentials grant for spec.oauth.resource, with the client
   * of spec.oauth.discovery (read now, so a rotated secret is used at the next run), reused
   * from an earlier run until shortly before it expires (oauth-token-cache.ts).
   */
  async #oauthToken(
    server: StoredMCPServer,
    oauth: NonNullable<StoredMCPServer['spec']['oauth']>,
    signal: AbortSignal,
  ): Promise<string> {
    const { namespace } = server.metadata;
    const ref = oauth.discovery.secretRef;
    const data = await this.#secretData(namespace, ref.name, 'MCPOP_DISCOVERY_OAUTH', signal);
    const value = (key: string): string => {
      const text = Buffer.from(data?.[key] ?? '', 'base64')
        .toString('utf8')
        .trim();
      if (text === '') {
        const problem = `Secret ${namespace}/${ref.name} (spec.oauth.discovery.secretRef) has no ${key}`;
        throw operatorError('MCPOP_DISCOVERY_OAUTH', 'client', problem);
      }
      return text;
    };
    return this.#oauthTokens.token({
      issuer: oauth.issuer,
      resource: oauth.resource,
      scopes: oauth.scopes ?? [],
      credentials: {
        clientId: value(OAUTH_CLIENT_ID_KEY),
        clientSecret: value(OAUTH_CLIENT_SECRET_KEY),
      },
      timeoutMs: timeoutMs(server.spec),
      signal,
      dispatcher: this.#o.dispatcher,
    });
  }

  /** A Secret's data, read now; a missing Secret is `code` ("does not exist"). */
  async #secretData(
    namespace: string,
    name: string,
    code: 'MCPOP_DISCOVERY_TOKEN_SECRET' | 'MCPOP_DISCOVERY_AUTH_SECRET' | 'MCPOP_DISCOVERY_OAUTH',
    signal: AbortSignal,
  ): Promise<Record<string, string> | undefined> {
    try {
      const body = await this.#o.client.request<{ data?: Record<string, string> }>({
        method: 'GET',
        path: objectPath(SECRET, namespace, name),
        signal,
      });
      return body.data;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      const secret = `${namespace}/${name}`;
      if (code === 'MCPOP_DISCOVERY_OAUTH')
        throw operatorError(
          code,
          'client',
          `Secret ${secret} (spec.oauth.discovery.secretRef) does not exist`,
        );
      throw operatorError(code, secret, 'does not exist');
    }
  }

  /** Stores the snapshot in its ConfigMap, unless that already holds exactly this. */
  async #store(server: StoredMCPServer, snapshot: Snapshot): Promise<StoredSnapshot> {
    const data = snapshotConfigMap(snapshot);
    if (!data.fits) {
      const largest = data.largest.map((t) => `${t.name} (${kib(t.bytes)})`).join(', ');
      const message = `The full snapshot of ${snapshot.tools.length} tools is ${kib(data.bytes)}, over the ConfigMap limit of ${kib(CONFIGMAP_LIMIT_BYTES)}, so it is not stored; status.discovery and drift still cover every tool. Largest: ${largest}.`;
      return { fits: false, message };
    }
    const name = objectNames(server).snapshotConfigMap;
    if (await this.#o.snapshots.write(server, name, data.data)) {
      this.#o.log.info(
        {
          namespace: server.metadata.namespace,
          name: server.metadata.name,
          configMap: name,
          tools: snapshot.tools.length,
        },
        'snapshot stored',
      );
    }
    return { fits: true, configMap: name };
  }

  /**
   * Drift against the baseline as it is now, computed while the full snapshot is at hand: the
   * reconcile pass reports it, and the drift gauges take its severity.
   */
  async #drift(
    key: string,
    server: StoredMCPServer,
    snapshot: Snapshot,
  ): Promise<{ basis: string; drift: Drift; severity: DriftSeverity | undefined } | undefined> {
    let baseline;
    try {
      baseline = await this.#o.baselines.resolve(key, server);
    } catch {
      // The reconcile pass reports an unreadable baseline, and computes drift once it reads.
      return undefined;
    }
    if (baseline.kind === 'invalid') return undefined;
    const inputs = driftInputs(baseline, server);
    const drift = driftFrom(snapshot, inputs);
    return {
      basis: driftBasis(inputs),
      drift,
      severity: inputs.approved === undefined ? undefined : serverDriftSeverity(drift),
    };
  }
}

/** The scheduler aborts with MCPOP_DISCOVERY_CANCELLED when the server was removed. */
function removed(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return (
    signal.aborted && reason instanceof OperatorError && reason.code === 'MCPOP_DISCOVERY_CANCELLED'
  );
}

/**
 * A failed run as status records it. The message is made visible and bounded once more here,
 * whatever built it: status must never carry a server's control characters or grow past what
 * the API server accepts.
 */
export function failureOf(error: unknown): Failure {
  const known = error instanceof OperatorError;
  const text = known ? error.message : `Unexpected error: ${String(error)}`;
  return {
    reason: (known && REASONS[error.code]) || DiscoveredReason.Failed,
    message: shown(sentence(text), MESSAGE_MAX),
  };
}

function kib(bytes: number): string {
  return `${Math.ceil(bytes / 1024)} KiB`;
}
