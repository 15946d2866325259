/** The permission arithmetic the chart's RBAC tests rely on. */
import { describe, expect, it } from 'vitest';
import { permissionsOf, withoutPermission } from './rbac.ts';
import { requestPermissions } from './recording-proxy.ts';

const rules = [
  { apiGroups: [''], resources: ['services', 'configmaps'], verbs: ['list', 'delete'] },
  { apiGroups: ['mcp-operator.dev'], resources: ['mcpservers/status'], verbs: ['patch'] },
];

describe('rules', () => {
  it('grant every group × resource × verb they list', () => {
    expect([...permissionsOf(rules)].sort()).toEqual([
      '/configmaps:delete',
      '/configmaps:list',
      '/services:delete',
      '/services:list',
      'mcp-operator.dev/mcpservers/status:patch',
    ]);
  });

  it('lose one permission without touching the rest of the rule', () => {
    const narrowed = withoutPermission(rules, '/services:delete');
    expect([...permissionsOf(narrowed)].sort()).toEqual([
      '/configmaps:delete',
      '/configmaps:list',
      '/services:list',
      'mcp-operator.dev/mcpservers/status:patch',
    ]);
    expect(withoutPermission(rules, 'mcp-operator.dev/mcpservers/status:patch')).toEqual([
      rules[0],
    ]);
  });
});

describe('a request needs', () => {
  const base = 'https://api.example';
  const cases: [string, string, number, string[]][] = [
    ['GET', '/api/v1/namespaces/a/pods?labelSelector=x', 200, ['/pods:list']],
    ['GET', '/api/v1/pods?watch=true&resourceVersion=5', 200, ['/pods:watch']],
    [
      'GET',
      '/apis/coordination.k8s.io/v1/namespaces/a/leases/l',
      404,
      ['coordination.k8s.io/leases:get'],
    ],
    ['POST', '/api/v1/namespaces/a/events', 201, ['/events:create']],
    [
      'PUT',
      '/apis/coordination.k8s.io/v1/namespaces/a/leases/l',
      200,
      ['coordination.k8s.io/leases:update'],
    ],
    ['PATCH', '/apis/apps/v1/namespaces/a/deployments/d', 200, ['apps/deployments:patch']],
    // A server-side apply that creates the object is authorized as create too.
    [
      'PATCH',
      '/apis/apps/v1/namespaces/a/deployments/d',
      201,
      ['apps/deployments:patch', 'apps/deployments:create'],
    ],
    [
      'PATCH',
      '/apis/mcp-operator.dev/v1alpha1/namespaces/a/mcpservers/m/status',
      200,
      ['mcp-operator.dev/mcpservers/status:patch'],
    ],
    ['DELETE', '/api/v1/namespaces/a/services/s', 200, ['/services:delete']],
    ['DELETE', '/api/v1/namespaces/a/services', 200, ['/services:deletecollection']],
    ['GET', '/version', 200, []],
  ];
  it.each(cases)('%s %s (%i): %j', (method, path, status, expected) => {
    expect(requestPermissions(method, new URL(path, base), status)).toEqual(expected);
  });
});
