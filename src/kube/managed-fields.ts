/**
 * Field ownership (metadata.managedFields) across the two ways the controller writes an object:
 * created with POST, its fields are owned by the field manager's `Update` entry; applied later,
 * by its `Apply` entry. An apply removes only the fields its own `Apply` entry owns and the new
 * configuration leaves out, so a field set at creation and dropped from the rendering since
 * would stay forever, owned by the `Update` entry.
 * https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management
 *
 * Before the first apply to an object created that way, its `Update` field set is moved into
 * the `Apply` entry, as client-go's csaupgrade package does for objects that were managed with
 * client-side apply (k8s.io/client-go/util/csaupgrade, UpgradeManagedFieldsPatch).
 * https://kubernetes.io/docs/reference/using-api/server-side-apply/#upgrading-from-client-side-apply-to-server-side-apply
 */
import type { KubeObject } from './resources.ts';

/**
 * A set of field paths in the FieldsV1 encoding: a trie whose keys are `f:<field>`,
 * `k:<list key>`, `v:<value>`, `i:<index>`, and `.` for "this node itself". Every leaf is `{}`.
 * https://kubernetes.io/docs/reference/generated/kubernetes-api/v1.34/#fieldsv1-v1-meta
 */
export interface FieldSet {
  [path: string]: FieldSet;
}

/** metav1.ManagedFieldsEntry. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: FieldSet;
  /** Set for a write to a subresource (`status`, `scale`); absent for the object itself. */
  subresource?: string;
}

/** Who wrote an object and how: an entry without its field set, for the caches. */
export type Writer = Pick<ManagedFieldsEntry, 'manager' | 'operation' | 'subresource'>;

/** What of `entry` a cache keeps: the field set is often half an object's size. */
export function writerOf({ manager, operation, subresource }: ManagedFieldsEntry): Writer {
  return subresource === undefined ? { manager, operation } : { manager, operation, subresource };
}

const managedFieldsOf = (obj: KubeObject): readonly ManagedFieldsEntry[] =>
  (obj.metadata.managedFields ?? []) as ManagedFieldsEntry[];

/** An entry of `manager`'s, on the object itself (not a subresource), by `operation`. */
const isOwn = (entry: Writer, manager: string, operation: 'Apply' | 'Update'): boolean =>
  entry.manager === manager && entry.operation === operation && entry.subresource === undefined;

/**
 * Whether `manager` owns fields of `obj` by an `Update` (it created the object with POST) that
 * its applies cannot remove until they are upgraded. Works on the writers a cache keeps.
 */
export function ownsByUpdate(obj: KubeObject, manager: string): boolean {
  return managedFieldsOf(obj).some((entry) => isOwn(entry, manager, 'Update'));
}

/** The union of two field sets. */
export function unionOf(a: FieldSet, b: FieldSet): FieldSet {
  const union: FieldSet = { ...a };
  for (const [path, below] of Object.entries(b)) {
    const mine = union[path];
    union[path] = mine === undefined ? below : unionOf(mine, below);
  }
  return union;
}

/**
 * `entries` with `manager`'s `Update` field sets moved into its `Apply` entry, or undefined when
 * there is nothing to move. As csaupgrade: the `Apply` entry is the existing one, else the most
 * recent `Update` entry (entries are sorted newest first) turned into one; the `Update` entries
 * of its apiVersion are merged into it and removed. Unlike csaupgrade, an `Update` entry of
 * another apiVersion stays: its paths are of another schema and cannot be merged, and dropping
 * it would leave its fields owned by nobody.
 */
export function upgradedManagedFields(
  entries: readonly ManagedFieldsEntry[],
  manager: string,
): ManagedFieldsEntry[] | undefined {
  const applied = entries.findIndex((entry) => isOwn(entry, manager, 'Apply'));
  const target = applied >= 0 ? applied : entries.findIndex((e) => isOwn(e, manager, 'Update'));
  if (target < 0) return undefined;
  const { apiVersion } = entries[target]!;
  const merged = (entry: ManagedFieldsEntry) =>
    isOwn(entry, manager, 'Update') && entry.apiVersion === apiVersion;
  const moved = entries.filter(merged);
  if (moved.length === 0) return undefined;
  const fieldsV1 = moved.reduce(
    (union, entry) => unionOf(union, entry.fieldsV1 ?? {}),
    entries[target]!.fieldsV1 ?? {},
  );
  const upgraded: ManagedFieldsEntry = {
    ...entries[target],
    operation: 'Apply',
    fieldsType: 'FieldsV1',
    fieldsV1,
  };
  return entries.flatMap((entry, i) => (i === target ? [upgraded] : merged(entry) ? [] : [entry]));
}

/** One operation of a JSON patch (RFC 6902). */
export interface JsonPatchOperation {
  op: 'replace';
  path: string;
  value: unknown;
}

/**
 * The JSON patch that upgrades `obj` (read whole, with its managedFields) for `manager`'s
 * applies, or undefined when it needs none. The whole list is replaced, so the patch holds only
 * if nobody wrote the object since it was read: it also sets the resourceVersion read, which
 * the API server compares on the write and answers 409 Conflict if it moved (a failed `test`
 * would be answered as an invalid request instead; csaupgrade does the same).
 */
export function upgradePatch(obj: KubeObject, manager: string): JsonPatchOperation[] | undefined {
  const upgraded = upgradedManagedFields(managedFieldsOf(obj), manager);
  if (upgraded === undefined) return undefined;
  return [
    { op: 'replace', path: '/metadata/managedFields', value: upgraded },
    { op: 'replace', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
  ];
}
