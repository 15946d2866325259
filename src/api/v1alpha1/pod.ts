/**
 * The pod overlay of MCPServer v1alpha1 (spec.pod) and the server container's security
 * settings (spec.securityContext).
 */

import { Type } from '@sinclair/typebox';
import { Affinity, LocalObjectReference, PodSecurityContext, Toleration } from '../core-v1.ts';
import { RESERVED_LABELS } from '../names.ts';
import { StringMap } from '../schema.ts';

/** Label keys: a qualified name, optionally prefixed by a DNS subdomain (core/v1 validation). */
const LABEL_KEY =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$';
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
const MAX_LABELS = 64;

const PodLabels = Type.Unsafe<Record<string, string>>({
  description: `Labels added to the pods. The operator's own ${RESERVED_LABELS.join(', ')} cannot be set.`,
  type: 'object',
  maxProperties: MAX_LABELS,
  additionalProperties: { type: 'string', maxLength: 63 },
  'x-kubernetes-validations': [
    {
      rule: `self.all(k, !(k in ${JSON.stringify(RESERVED_LABELS).replaceAll('"', "'")}))`,
      message: `spec.pod.labels must not set ${RESERVED_LABELS.join(', ')}: the operator selects its pods by them`,
    },
    {
      rule: `self.all(k, k.size() <= 316 && k.matches('${LABEL_KEY}') && self[k].matches('${LABEL_VALUE}'))`,
      message:
        'spec.pod.labels keys must be qualified names (prefix/name) and values at most 63 characters of A-Z, a-z, 0-9, -, _ and ., starting and ending alphanumeric',
    },
  ],
});

export const Pod = Type.Object(
  {
    serviceAccountName: Type.Optional(
      Type.String({
        description:
          'ServiceAccount the pods run as. Defaults to one the operator creates, named after the MCPServer, whose token is not mounted.',
        minLength: 1,
        maxLength: 253,
      }),
    ),
    nodeSelector: Type.Optional(StringMap({ description: 'Node labels the pods must run on.' })),
    tolerations: Type.Optional(
      Type.Array(Toleration, { description: 'Taints the pods tolerate.' }),
    ),
    affinity: Type.Optional(Affinity),
    imagePullSecrets: Type.Optional(
      Type.Array(LocalObjectReference, {
        description: 'Secrets for pulling the server image from a private registry.',
      }),
    ),
    labels: Type.Optional(PodLabels),
    annotations: Type.Optional(
      StringMap({ description: 'Annotations added to the pods.', maxProperties: MAX_LABELS }),
    ),
    securityContext: Type.Optional(PodSecurityContext),
  },
  { description: 'Overlay on the pods the operator renders (image and url aside).' },
);

export const ContainerSecurityContext = Type.Object(
  {
    readOnlyRootFilesystem: Type.Optional(
      Type.Boolean({
        description:
          'Mount the image read-only. Defaults to true; the server still gets a writable /tmp (also its HOME unless env sets HOME). Set false for servers that write elsewhere.',
      }),
    ),
  },
  {
    description:
      'Security settings of the server container. The rest is fixed to the restricted Pod Security Standard: no privilege escalation, all capabilities dropped.',
  },
);
