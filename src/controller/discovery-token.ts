/**
 * The discovery token of a stdio server under `driftPolicy: Enforce`. The bridge lists tools
 * unfiltered by its policy (UNFILTERED_LIST_META) only for a request that carries this token in
 * DISCOVERY_TOKEN_HEADER; without that any agent's client could ask for the unfiltered list and
 * put a drifted tool's poisoned description in front of its model.
 *
 * The token lives in an owned Secret `<name>-discovery`, mounted into the bridge alone and read
 * by discovery at each run. It is random, so pure render() cannot make it: the controller
 * creates the Secret when its metadata cache lacks it (a POST; AlreadyExists is fine: the cache
 * was behind) and never writes it again, so an existing token is never replaced and a steady
 * state writes nothing. It is deleted when the server no longer needs it, and with the server
 * (owner reference).
 */

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { FIELD_MANAGER } from '../api/names.ts';
import { needsDiscoveryToken } from '../api/v1alpha1/spec.ts';
import { DISCOVERY_TOKEN_KEY, objectNames, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { errorText, isConflict, isNotFound, type KubeClient } from '../kube/client.ts';
import type { Store } from '../kube/store.ts';
import {
  SECRET,
  collectionPath,
  controllerOf,
  keyOf,
  objectKey,
  objectPath,
  type KubeObject,
} from '../kube/resources.ts';
import { ownerKey } from './caches.ts';
import { objectMeta } from './render/metadata.ts';

/** Bytes of randomness in a token (base64url: 43 characters). */
const TOKEN_BYTES = 32;

/** A new Secret with a fresh random token; its value never reaches a log, status or event. */
export function discoveryTokenSecret(server: StoredMCPServer) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: objectMeta(server, objectNames(server).discoverySecret),
    type: 'Opaque',
    stringData: { [DISCOVERY_TOKEN_KEY]: randomBytes(TOKEN_BYTES).toString('base64url') },
  };
}

/** Why the Secret could not be put in place: the object, a message for status, the error. */
export interface TokenFailure {
  object: string;
  message: string;
  err: unknown;
}

/** The Secret's lifecycle within a reconcile pass: created before the Deployment, pruned after. */
export class DiscoveryTokens {
  readonly #client: KubeClient;
  /** The metadata cache of Secrets (no values). */
  readonly #secrets: Store<KubeObject>;

  constructor(client: KubeClient, secrets: Store<KubeObject>) {
    this.#client = client;
    this.#secrets = secrets;
  }

  /**
   * Creates the Secret if the cache has none: before the Deployment, whose bridge mounts it.
   * Never updates it: the token stays what it was. Says what it created, or why it failed.
   */
  async ensure(
    server: StoredMCPServer,
    log: Logger,
  ): Promise<{ created?: string; failure?: TokenFailure }> {
    if (!needsDiscoveryToken(server)) return {};
    const { namespace } = server.metadata;
    const name = objectNames(server).discoverySecret;
    const object = `Secret/${name}`;
    const live = this.#secrets.get(objectKey(namespace, name));
    if (live !== undefined) {
      if (ownerKey(live) === keyOf(server)) return {};
      const message = `${object} already exists and is controlled by something else; delete or rename it`;
      return { failure: { object, message, err: new Error(message) } };
    }
    try {
      await this.#client.request({
        method: 'POST',
        path: collectionPath(SECRET, namespace),
        query: { fieldManager: FIELD_MANAGER },
        body: discoveryTokenSecret(server),
      });
    } catch (err) {
      // AlreadyExists: created by an earlier pass the cache has not seen yet; the token stays.
      if (isConflict(err)) return {};
      return { failure: { object, message: `Could not create ${object}: ${errorText(err)}`, err } };
    }
    log.info({ object }, 'created');
    return { created: object };
  }

  /** Deletes the Secret of a server that no longer needs it; says what it deleted. */
  async prune(server: StoredMCPServer, log: Logger): Promise<string | undefined> {
    if (needsDiscoveryToken(server)) return undefined;
    const { namespace, uid } = server.metadata;
    const name = objectNames(server).discoverySecret;
    const live = this.#secrets.get(objectKey(namespace, name));
    if (live === undefined || controllerOf(live)?.uid !== uid) return undefined;
    try {
      await this.#client.request({
        method: 'DELETE',
        path: objectPath(SECRET, namespace, name),
        body: { preconditions: { uid: live.metadata.uid }, propagationPolicy: 'Background' },
      });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
    log.info({ object: `Secret/${name}` }, 'deleted, no longer desired');
    return `Secret/${name}`;
  }
}
