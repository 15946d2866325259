/**
 * How a bench lays N servers out over namespaces: `perNamespace` to a namespace, the last one
 * holding the rest. The floor and the operator phase use the same layout, so that their ratio
 * compares the same cluster work.
 */
import type { KubeClient } from '../src/kube/client.ts';
import { createNamespace, pool, removeNamespace } from './harness.ts';

/** One namespace of a layout and how many servers it holds. */
export interface Slot {
  namespace: string;
  count: number;
}

/** A server of a layout: `srv-<index>` in `namespace`. */
export interface Placement {
  namespace: string;
  index: number;
}

/** How many servers each namespace holds: `perNamespace` each, the remainder in the last. */
export function namespaceSizes(n: number, perNamespace: number): number[] {
  if (!Number.isInteger(n) || n < 0) throw new Error(`server count ${n} is not a whole number`);
  if (!Number.isInteger(perNamespace) || perNamespace < 1)
    throw new Error(`servers per namespace ${perNamespace} is not a positive whole number`);
  return Array.from({ length: Math.ceil(n / perNamespace) }, (_, i) =>
    Math.min(perNamespace, n - i * perNamespace),
  );
}

/** Every server of a layout, namespace by namespace. */
export function placements(layout: readonly Slot[]): Placement[] {
  return layout.flatMap(({ namespace, count }) =>
    Array.from({ length: count }, (_, index) => ({ namespace, index })),
  );
}

/** Creates the namespaces of a layout of `n` servers, named `<prefix>-<i>-…`. */
export async function createLayout(
  client: KubeClient,
  prefix: string,
  n: number,
  perNamespace: number,
): Promise<Slot[]> {
  const sizes = namespaceSizes(n, perNamespace);
  return Promise.all(
    sizes.map(async (count, i) => ({
      namespace: await createNamespace(client, `${prefix}-${i}`),
      count,
    })),
  );
}

/**
 * Removes a layout's namespaces, a few at a time: each removal already deletes its Services 32
 * at a time, and the namespace controller works through them one by one anyway.
 */
export async function removeLayout(client: KubeClient, layout: readonly Slot[]): Promise<void> {
  await pool([...layout], 4, ({ namespace }) => removeNamespace(client, namespace));
}
