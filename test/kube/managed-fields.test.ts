import { describe, expect, it } from 'vitest';
import {
  ownsByUpdate,
  unionOf,
  upgradePatch,
  upgradedManagedFields,
  writerOf,
  type ManagedFieldsEntry,
} from '../../src/kube/managed-fields.ts';
import type { KubeObject } from '../../src/kube/resources.ts';

const MANAGER = 'mcp-operator';
const TIME = '2026-01-01T00:00:00Z';

/** What the API server records for a Deployment POSTed by MANAGER (abridged field sets). */
const created: ManagedFieldsEntry = {
  manager: MANAGER,
  operation: 'Update',
  apiVersion: 'apps/v1',
  time: TIME,
  fieldsType: 'FieldsV1',
  fieldsV1: {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } },
    'f:spec': { 'f:replicas': {} },
  },
};
/** The Deployment controller's writes to the status subresource. */
const statusWriter: ManagedFieldsEntry = {
  manager: 'kube-controller-manager',
  operation: 'Update',
  apiVersion: 'apps/v1',
  time: TIME,
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:status': { 'f:replicas': {} } },
  subresource: 'status',
};
/** MANAGER's apply of a later rendering, without the `tier` label. */
const applied: ManagedFieldsEntry = {
  manager: MANAGER,
  operation: 'Apply',
  apiVersion: 'apps/v1',
  time: TIME,
  fieldsType: 'FieldsV1',
  fieldsV1: {
    'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:annotations': { 'f:hash': {} } },
  },
};

const objectWith = (managedFields: ManagedFieldsEntry[]): KubeObject => ({
  metadata: { name: 'srv', namespace: 'ns', resourceVersion: '42', managedFields },
});

describe('upgradedManagedFields', () => {
  it('turns the field set written by POST into the apply entry, and leaves other writers be', () => {
    expect(upgradedManagedFields([created, statusWriter], MANAGER)).toEqual([
      { ...created, operation: 'Apply' },
      statusWriter,
    ]);
  });

  it('merges the POST field set into an existing apply entry, and drops the Update entry', () => {
    expect(upgradedManagedFields([created, statusWriter, applied], MANAGER)).toEqual([
      statusWriter,
      {
        ...applied,
        fieldsV1: {
          'f:metadata': {
            'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} },
            'f:annotations': { 'f:hash': {} },
          },
          'f:spec': { 'f:replicas': {} },
        },
      },
    ]);
  });

  it('has nothing to do once only the apply entry owns what the manager set', () => {
    expect(upgradedManagedFields([statusWriter, applied], MANAGER)).toBeUndefined();
    expect(upgradedManagedFields([statusWriter], MANAGER)).toBeUndefined();
  });

  it("leaves the manager's writes to a subresource and another manager's Update alone", () => {
    const ownStatus = { ...created, subresource: 'status' };
    const other = { ...created, manager: 'someone-else' };
    expect(upgradedManagedFields([ownStatus, other, applied], MANAGER)).toBeUndefined();
  });

  it('keeps an Update entry of another apiVersion, whose paths cannot be merged', () => {
    const older = { ...created, apiVersion: 'apps/v1beta2' };
    expect(upgradedManagedFields([created, older], MANAGER)).toEqual([
      { ...created, operation: 'Apply' },
      older,
    ]);
  });
});

describe('unionOf', () => {
  it('unites nested field sets, list elements by key included', () => {
    const a = { 'f:spec': { 'f:ports': { 'k:{"port":80}': { '.': {} } } } };
    const b = { 'f:spec': { 'f:ports': { 'k:{"port":81}': { '.': {} } }, 'f:type': {} } };
    expect(unionOf(a, b)).toEqual({
      'f:spec': {
        'f:ports': { 'k:{"port":80}': { '.': {} }, 'k:{"port":81}': { '.': {} } },
        'f:type': {},
      },
    });
    expect(a).toEqual({ 'f:spec': { 'f:ports': { 'k:{"port":80}': { '.': {} } } } });
  });
});

describe('upgradePatch', () => {
  it('replaces managedFields, and sets the resourceVersion read so a write since fails', () => {
    expect(upgradePatch(objectWith([created, statusWriter]), MANAGER)).toEqual([
      {
        op: 'replace',
        path: '/metadata/managedFields',
        value: [{ ...created, operation: 'Apply' }, statusWriter],
      },
      { op: 'replace', path: '/metadata/resourceVersion', value: '42' },
    ]);
  });

  it('is undefined when there is nothing to upgrade', () => {
    expect(upgradePatch(objectWith([applied]), MANAGER)).toBeUndefined();
    expect(upgradePatch({ metadata: { name: 'srv' } }, MANAGER)).toBeUndefined();
  });
});

describe('ownsByUpdate', () => {
  it('tells from the writers a cache keeps whether an apply needs an upgrade first', () => {
    const cached = (entries: ManagedFieldsEntry[]) => objectWith(entries.map(writerOf));
    expect(cached([created]).metadata.managedFields).toEqual([
      { manager: MANAGER, operation: 'Update' },
    ]);
    expect(ownsByUpdate(cached([created, statusWriter]), MANAGER)).toBe(true);
    expect(ownsByUpdate(cached([statusWriter, applied]), MANAGER)).toBe(false);
    expect(ownsByUpdate(cached([{ ...created, subresource: 'status' }]), MANAGER)).toBe(false);
    expect(ownsByUpdate({ metadata: { name: 'srv' } }, MANAGER)).toBe(false);
  });
});
