/**
 * What the user may do, asked of the API server as the user: SelfSubjectAccessReview for a verb
 * on a resource (so the pages grey out what RBAC would refuse, instead of failing at the click)
 * and SelfSubjectReview for who the user is. Neither is trusted for a write: the write itself
 * runs as the user and the API server decides again.
 * https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access
 */

import { API_GROUP, PLURAL } from '../api/names.ts';
import type { KubeClient } from '../kube/client.ts';

export interface Attributes {
  verb: string;
  group: string;
  resource: string;
  namespace?: string | undefined;
}

interface AccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/** Answers are kept this long: RBAC changes rarely, and a page load may ask per server. */
export const ACCESS_TTL_MS = 30_000;

export class Access {
  readonly #client: KubeClient;
  readonly #answers = new Map<string, { at: number; answer: Promise<boolean> }>();

  constructor(client: KubeClient) {
    this.#client = client;
  }

  /** Whether the API server would allow the request; a failed review counts as no. */
  allowed(a: Attributes): Promise<boolean> {
    const key = JSON.stringify([a.verb, a.group, a.resource, a.namespace ?? '']);
    const known = this.#answers.get(key);
    if (known !== undefined && Date.now() - known.at < ACCESS_TTL_MS) return known.answer;
    const answer = this.#review(a);
    this.#answers.set(key, { at: Date.now(), answer });
    return answer;
  }

  async #review(a: Attributes): Promise<boolean> {
    try {
      const review = await this.#client.request<AccessReview>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { ...a, namespace: a.namespace } },
        },
      });
      return review.status?.allowed === true;
    } catch {
      return false;
    }
  }

  /** Whether the user may approve (patch) MCPServers in `namespace`, and if not, why. */
  async approval(namespace: string): Promise<{ canApprove: boolean; reason: string | undefined }> {
    const canApprove = await this.allowed({
      verb: 'patch',
      group: API_GROUP,
      resource: PLURAL,
      namespace,
    });
    return {
      canApprove,
      reason: canApprove
        ? undefined
        : `Read-only: your credentials may not patch ${PLURAL}.${API_GROUP} in namespace ${namespace}, so approving is not offered.`,
    };
  }
}

/** Who the API server says the credentials are (SelfSubjectReview, GA in 1.28); undefined if it will not say. */
export async function whoAmI(client: KubeClient): Promise<string | undefined> {
  try {
    const review = await client.request<{ status?: { userInfo?: { username?: string } } }>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return review.status?.userInfo?.username;
  } catch {
    return undefined;
  }
}
