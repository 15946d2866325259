/**
 * What a server's last passes learnt about its rendered objects, so that a pass over an
 * unchanged server does not work it out again. A server is reconciled many times while it rolls
 * out (every Deployment and Pod change), and render returns the same objects each time.
 *
 * - The objects themselves, with their applied hashes: render is pure (src/controller/render),
 *   so the same inputs give the same objects, and they are rendered and hashed again only when
 *   the digest of the inputs changes. The inputs are a fraction of the output's size (a
 *   server's spec against its four objects), and most passes of a rolling-out server, which
 *   observe its Deployment and Pods, then render nothing, serialise nothing and copy nothing:
 *   the rendering and its hashing were about half of such a pass's time and allocations
 *   (measured in-process). The objects are shared by every pass until then.
 * - That a live object has what its desired one sets (`needsApply` false): it stays so while
 *   neither changes, that is for the same applied hash and the same live uid and
 *   resourceVersion (the API server changes the resourceVersion with every write).
 */
import { hash } from 'node:crypto';
import { appliedHash, needsApply, withHash, APPLIED_HASH_ANNOTATION } from '../kube/apply.ts';
import type { KubeObject } from '../kube/resources.ts';

interface Remembered {
  /** Digest of the JSON of what the objects were rendered from. */
  inputs: string;
  /** As rendered, each with its applied-hash annotation. */
  desired: KubeObject[];
  /** By kind/name: the live version and applied hash last found to need no apply. */
  upToDate: Map<string, string>;
}

const objectId = (obj: KubeObject) => `${obj.kind}/${obj.metadata.name}`;

const versionOf = (desired: KubeObject, live: KubeObject) =>
  `${live.metadata.uid}/${live.metadata.resourceVersion}/${desired.metadata.annotations?.[APPLIED_HASH_ANNOTATION]}`;

export class ApplyMemo {
  /** By MCPServer key: one entry per server, dropped when it is gone. */
  readonly #byServer = new Map<string, Remembered>();

  /**
   * The objects `render` returns for the server `key`, each with its applied-hash annotation;
   * `render` is called only when `inputs`, everything it reads, differ from the last pass's.
   * Later passes get the same objects: no caller changes them.
   */
  desired(key: string, inputs: unknown, render: () => readonly KubeObject[]): KubeObject[] {
    const digest = hash('sha256', JSON.stringify(inputs), 'base64');
    let remembered = this.#byServer.get(key);
    if (remembered?.inputs !== digest) {
      const desired = render().map((obj) => withHash(obj, appliedHash(obj)));
      remembered = { inputs: digest, desired, upToDate: new Map() };
      this.#byServer.set(key, remembered);
    }
    return remembered.desired;
  }

  /** `needsApply(desired, live)` for an object of the server `key`, from `desired`. */
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
