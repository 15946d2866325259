import { describe, expect, it } from 'vitest';
import { CHECKSUM_ANNOTATION, startupReferences } from '../../../src/controller/render/pod.ts';
import type { Resolved } from '../../../src/controller/render/options.ts';
import type { StoredMCPServer } from '../../../src/api/v1alpha1/stored.ts';
import { OPTIONS, deploymentOf, stdio } from './fixtures.ts';

const server = stdio({
  env: [
    { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'weather', key: 'api-key' } } },
    { name: 'REGION', valueFrom: { configMapKeyRef: { name: 'settings', key: 'region' } } },
    { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ],
  envFrom: [{ secretRef: { name: 'weather' } }, { configMapRef: { name: 'defaults' } }],
  auth: { secretRef: { name: 'clients' } },
});

function checksum(of: StoredMCPServer, resolved: Resolved = {}): string | undefined {
  return deploymentOf(of, OPTIONS, resolved).spec?.template.metadata?.annotations?.[
    CHECKSUM_ANNOTATION
  ];
}

describe('render: config checksum on the pod template', () => {
  it('names every Secret and ConfigMap the pods read only at start', () => {
    expect(startupReferences(server)).toEqual([
      'ConfigMap/defaults',
      'ConfigMap/settings',
      'Secret/clients',
      'Secret/weather',
    ]);
  });

  it('changes when a referenced Secret changes, so the pods restart with the new value', () => {
    const versions = { 'Secret/weather': '100', 'Secret/clients': '7', 'ConfigMap/settings': '3' };
    const before = checksum(server, { referenceVersions: versions });
    expect(before).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(checksum(server, { referenceVersions: { ...versions } })).toBe(before);
    expect(
      checksum(server, { referenceVersions: { ...versions, 'Secret/weather': '101' } }),
    ).not.toBe(before);
    expect(
      checksum(server, { referenceVersions: { ...versions, 'Secret/clients': '8' } }),
    ).not.toBe(before);
  });

  it('ignores objects the pods do not read', () => {
    const versions = { 'Secret/weather': '100' };
    expect(checksum(server, { referenceVersions: { ...versions, 'Secret/unrelated': '1' } })).toBe(
      checksum(server, { referenceVersions: versions }),
    );
  });
});
