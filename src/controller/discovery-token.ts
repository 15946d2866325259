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
import { DISCOVERY_TOKEN_KEY, objectNames, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
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
