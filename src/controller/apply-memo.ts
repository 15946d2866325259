/**
 * What a server's last passes learnt about its rendered objects, so that a pass over an
 * unchanged server does not work it out again. A server is reconciled many times while it rolls
 * out (every Deployment and Pod change), and render returns the same objects each time.
 *
 * - Their applied hashes: a hash is of JSON with sorted keys (src/kube/apply.ts), which costs
 *   several times what plain JSON and a native digest of it do (0.5 against 0.1 ms for a
 *   server's four objects, measured). The plain text's digest tells whether anything was
 *   rendered differently, and only then are the hashes computed again. Equal plain text means
 *   equal objects, so the hashes are exactly those `appliedHash` gives.
 * - That a live object has what its desired one sets (`needsApply` false): it stays so while
 *   neither changes, that is for the same applied hash and the same live uid and
 *   resourceVersion (the API server changes the resourceVersion with every write).
 */
import { createHash } from 'node:crypto';
import { appliedHash, needsApply, withHash, APPLIED_HASH_ANNOTATION } from '../kube/apply.ts';
import type { KubeObject } from '../kube/resources.ts';

interface Remembered {
  /** Digest of the plain JSON of the rendered objects, in render's order. */
  digest: string;
  hashes: string[];
  /** By kind/name: the live version and applied hash last found to need no apply. */
  upToDate: Map<string, string>;
}

const objectId = (obj: KubeObject) => `${obj.kind}/${obj.metadata.name}`;

const versionOf = (desired: KubeObject, live: KubeObject) =>
  `${live.metadata.uid}/${live.metadata.resourceVersion}/${desired.metadata.annotations?.[APPLIED_HASH_ANNOTATION]}`;

export class ApplyMemo {
  /** By MCPServer key: one entry per server, dropped when it is gone. */
  readonly #byServer = new Map<string, Remembered>();

  /** `desired`, rendered for the server `key`, each with its applied-hash annotation. */
  withHashes(key: string, desired: readonly KubeObject[]): KubeObject[] {
    const digest = createHash('sha256').update(JSON.stringify(desired)).digest('base64');
    let remembered = this.#byServer.get(key);
    if (remembered?.digest !== digest) {
      remembered = { digest, hashes: desired.map(appliedHash), upToDate: new Map() };
      this.#byServer.set(key, remembered);
    }
    const { hashes } = remembered;
    return desired.map((obj, i) => withHash(obj, hashes[i]!));
  }

  /** `needsApply(desired, live)` for an object of the server `key`, from `withHashes`. */
  needsApply(key: string, desired: KubeObject, live: KubeObject | undefined): boolean {
    const upToDate = this.#byServer.get(key)?.upToDate;
    if (live === undefined || upToDate === undefined) return needsApply(desired, live);
    const version = versionOf(desired, live);
    if (upToDate.get(objectId(desired)) === version) return false;
    const needed = needsApply(desired, live);
    if (needed) upToDate.delete(objectId(desired));
    else upToDate.set(objectId(desired), version);
    return needed;
  }

  forget(key: string): void {
    this.#byServer.delete(key);
  }
}
