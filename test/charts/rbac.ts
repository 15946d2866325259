/**
 * RBAC as the chart tests reason about it: a permission is `group/resource[/subresource]:verb`
 * (the core group is empty: `/pods:list`), the unit the API server authorizes a request by.
 */
import { AuthorizationV1Api, type KubeConfig, type V1PolicyRule } from '@kubernetes/client-node';

/** Every permission `rules` grant (resourceNames aside). */
export function permissionsOf(rules: readonly V1PolicyRule[]): Set<string> {
  return new Set(
    rules.flatMap((rule) =>
      (rule.apiGroups ?? []).flatMap((group) =>
        (rule.resources ?? []).flatMap((resource) =>
          rule.verbs.map((verb) => `${group}/${resource}:${verb}`),
        ),
      ),
    ),
  );
}

function parse(permission: string) {
  const colon = permission.lastIndexOf(':');
  const target = permission.slice(0, colon);
  const slash = target.indexOf('/');
  return {
    group: target.slice(0, slash),
    resource: target.slice(slash + 1),
    verb: permission.slice(colon + 1),
  };
}

/** `rules` without one permission; other resources and verbs of the same rule keep theirs. */
export function withoutPermission(
  rules: readonly V1PolicyRule[],
  permission: string,
): V1PolicyRule[] {
  const { group, resource, verb } = parse(permission);
  return rules.flatMap((rule) => {
    if (!rule.apiGroups?.includes(group) || !rule.resources?.includes(resource)) return [rule];
    const others = rule.resources.filter((r) => r !== resource);
    const narrowed = rule.verbs.filter((v) => v !== verb);
    return [
      ...(others.length > 0 ? [{ ...rule, resources: others }] : []),
      ...(narrowed.length > 0 ? [{ ...rule, resources: [resource], verbs: narrowed }] : []),
    ];
  });
}

/** Whether the API server lets a ServiceAccount do `permission` in `namespace` ('' = all). */
export async function allowed(
  kc: KubeConfig,
  serviceAccount: { namespace: string; name: string },
  permission: string,
  namespace: string,
): Promise<boolean> {
  const { group, resource: target, verb } = parse(permission);
  const [resource, subresource] = target.split('/');
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user: `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`,
        groups: [
          'system:serviceaccounts',
          `system:serviceaccounts:${serviceAccount.namespace}`,
          'system:authenticated',
        ],
        resourceAttributes: { namespace, verb, group, resource, subresource },
      },
    },
  });
  return review.status?.allowed === true;
}
