/**
 * The resource a request path addresses, as the operator's request metrics label it: the kind's
 * plural and subresource, never a namespace or an object's name (which would make the label
 * unbounded).
 */
import { describe, expect, it } from 'vitest';
import {
  CONFIG_MAP,
  DEPLOYMENT,
  EVENT,
  LEASE,
  NAMESPACE,
  collectionPath,
  objectPath,
  resourceOfPath,
} from '../../src/kube/resources.ts';
import { MCP_SERVER } from '../../src/api/v1alpha1/stored.ts';

describe('resourceOfPath', () => {
  it('names the plural of objects and collections, namespaced or not, core or grouped', () => {
    expect(resourceOfPath(objectPath(CONFIG_MAP, 'team-a', 'snapshot-x'))).toBe('configmaps');
    expect(resourceOfPath(collectionPath(DEPLOYMENT, 'team-a'))).toBe('deployments');
    expect(resourceOfPath(collectionPath(DEPLOYMENT))).toBe('deployments');
    expect(resourceOfPath(objectPath(LEASE, 'mcp-system', 'mcp-operator'))).toBe('leases');
    expect(resourceOfPath(collectionPath(EVENT, 'namespaces'))).toBe('events');
  });

  it('adds the subresource, so status writes count apart from spec writes', () => {
    expect(resourceOfPath(objectPath(MCP_SERVER, 'team-a', 'time', 'status'))).toBe(
      'mcpservers/status',
    );
  });

  it('reads namespaces themselves as the resource, and ignores the query', () => {
    expect(resourceOfPath(objectPath(NAMESPACE, undefined, 'team-a'))).toBe('namespaces');
    expect(resourceOfPath(`${collectionPath(CONFIG_MAP, 'ns')}?labelSelector=a%3Db`)).toBe(
      'configmaps',
    );
  });
});
