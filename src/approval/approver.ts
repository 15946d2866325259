/**
 * Who is approving: the user the API server authenticates for these credentials, asked with a
 * SelfSubjectReview (authentication.k8s.io/v1, GA in Kubernetes 1.28; every authenticated user
 * may create one). It is what `kubectl auth whoami` prints.
 */

import { APPROVER_MAX } from '../api/v1alpha1/tools.ts';
import { operatorError } from '../errors.ts';
import { type KubeClient, errorText } from '../kube/client.ts';

const SELF_SUBJECT_REVIEWS = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

interface SelfSubjectReview {
  status?: { userInfo?: { username?: string } };
}

/** The user name the API server knows the client as. */
export async function approverName(client: KubeClient): Promise<string> {
  let review: SelfSubjectReview;
  try {
    review = await client.request<SelfSubjectReview>({
      method: 'POST',
      path: SELF_SUBJECT_REVIEWS,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
  } catch (error) {
    throw operatorError('MCPOP_APPROVER_UNKNOWN', errorText(error));
  }
  const name = review.status?.userInfo?.username;
  if (name === undefined || name === '') {
    throw operatorError('MCPOP_APPROVER_UNKNOWN', 'the API server named no user');
  }
  return name.slice(0, APPROVER_MAX);
}
