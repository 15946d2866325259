/**
 * The subset of core/v1 and meta/v1 shapes the MCPServer API embeds, written as structural
 * schemas with the same wire names and meaning as upstream, so that what a user knows from a
 * Pod spec carries over. Descriptions are shortened from the upstream API reference.
 * https://kubernetes.io/docs/reference/kubernetes-api/
 */

import { Type, type Static } from '@sinclair/typebox';
import { Quantity, StringEnum, StringMap } from './schema.ts';

const DNS_SUBDOMAIN_MAX = 253;

/** A reference to an object in the same namespace, by name (core/v1 LocalObjectReference). */
export const LocalObjectReference = Type.Object(
  {
    name: Type.String({
      description: 'Name of the referent, in the same namespace.',
      minLength: 1,
      maxLength: DNS_SUBDOMAIN_MAX,
    }),
  },
  { description: 'A reference to an object in the same namespace.' },
);

/** A key of a Secret or ConfigMap (core/v1 SecretKeySelector / ConfigMapKeySelector). */
function keySelector(kind: 'Secret' | 'ConfigMap') {
  return Type.Object(
    {
      name: Type.String({
        description: `Name of the ${kind}, in the same namespace.`,
        minLength: 1,
        maxLength: DNS_SUBDOMAIN_MAX,
      }),
      key: Type.String({ description: `Key within the ${kind}.`, minLength: 1 }),
      optional: Type.Optional(
        Type.Boolean({ description: `Whether the ${kind} or its key may be missing.` }),
      ),
    },
    { description: `Selects a key of a ${kind}.` },
  );
}

function exactlyOneOf(fields: readonly string[], path: string) {
  const count = fields.map((field) => `(has(self.${field}) ? 1 : 0)`).join(' + ');
  return {
    rule: `${count} == 1`,
    message: `${path} must set exactly one of ${fields.join(', ')}`,
  };
}

const VALUE_FROM_SOURCES = ['secretKeyRef', 'configMapKeyRef', 'fieldRef', 'resourceFieldRef'];

export const EnvVarSource = Type.Object(
  {
    secretKeyRef: Type.Optional(keySelector('Secret')),
    configMapKeyRef: Type.Optional(keySelector('ConfigMap')),
    fieldRef: Type.Optional(
      Type.Object(
        {
          fieldPath: Type.String({
            description: 'Path of the field of the pod, such as metadata.namespace.',
          }),
          apiVersion: Type.Optional(
            Type.String({ description: 'Version of the schema fieldPath is written in; v1.' }),
          ),
        },
        { description: 'A field of the pod (downward API).' },
      ),
    ),
    resourceFieldRef: Type.Optional(
      Type.Object(
        {
          resource: Type.String({ description: 'Resource to select, such as limits.memory.' }),
          containerName: Type.Optional(
            Type.String({ description: 'Container whose resource is selected.' }),
          ),
          divisor: Type.Optional(Quantity({ description: 'Unit the value is divided by.' })),
        },
        { description: 'A resource limit or request of a container (downward API).' },
      ),
    ),
  },
  {
    description: "Source of an environment variable's value.",
    'x-kubernetes-validations': [exactlyOneOf(VALUE_FROM_SOURCES, 'valueFrom')],
  },
);

/** core/v1 EnvVar. Secrets go through `valueFrom.secretKeyRef`, never inline `value`. */
export const EnvVar = Type.Object(
  {
    name: Type.String({ description: 'Name of the environment variable.', minLength: 1 }),
    value: Type.Optional(
      Type.String({
        description:
          'Literal value. Do not put secrets here: use valueFrom.secretKeyRef, which keeps the value out of the MCPServer.',
      }),
    ),
    valueFrom: Type.Optional(EnvVarSource),
  },
  {
    description: 'An environment variable of the server container.',
    'x-kubernetes-validations': [
      {
        rule: '!(has(self.value) && has(self.valueFrom))',
        message: 'an environment variable sets value or valueFrom, not both',
      },
    ],
  },
);

/** core/v1 EnvFromSource. */
export const EnvFromSource = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({ description: 'Prefix added to the name of every variable.' }),
    ),
    configMapRef: Type.Optional(
      Type.Object(
        {
          name: LocalObjectReference.properties.name,
          optional: Type.Optional(
            Type.Boolean({ description: 'Whether the ConfigMap may be missing.' }),
          ),
        },
        { description: 'A ConfigMap whose keys become environment variables.' },
      ),
    ),
    secretRef: Type.Optional(
      Type.Object(
        {
          name: LocalObjectReference.properties.name,
          optional: Type.Optional(
            Type.Boolean({ description: 'Whether the Secret may be missing.' }),
          ),
        },
        { description: 'A Secret whose keys become environment variables.' },
      ),
    ),
  },
  {
    description: 'A ConfigMap or Secret whose keys all become environment variables.',
    'x-kubernetes-validations': [exactlyOneOf(['configMapRef', 'secretRef'], 'envFrom')],
  },
);

const ResourceList = (description: string) =>
  Type.Unsafe<Record<string, number | string>>({
    description,
    type: 'object',
    additionalProperties: Quantity({ description: 'A quantity such as 500m or 256Mi.' }),
  });

/** core/v1 ResourceRequirements without `claims` (dynamic resource allocation). */
export const ResourceRequirements = Type.Object(
  {
    requests: Type.Optional(
      ResourceList('Minimum resources the scheduler reserves, such as cpu: 100m, memory: 128Mi.'),
    ),
    limits: Type.Optional(ResourceList('Maximum resources the container may use.')),
  },
  {
    description:
      'Compute resources of the server container, used as given. When unset, the operator default applies (out of the box: requests cpu 50m, memory 64Mi; limit memory 512Mi).',
  },
);

/** core/v1 Toleration. */
export const Toleration = Type.Object(
  {
    key: Type.Optional(
      Type.String({ description: 'Taint key the toleration applies to; empty matches all.' }),
    ),
    operator: Type.Optional(
      StringEnum(['Exists', 'Equal'], {
        description: 'Exists matches any value; Equal matches value. Defaults to Equal.',
      }),
    ),
    value: Type.Optional(Type.String({ description: 'Taint value to match with Equal.' })),
    effect: Type.Optional(
      StringEnum(['NoSchedule', 'PreferNoSchedule', 'NoExecute'], {
        description: 'Taint effect to match; empty matches all effects.',
      }),
    ),
    tolerationSeconds: Type.Optional(
      Type.Integer({
        description: 'For NoExecute: how long the pod stays bound after the taint appears.',
      }),
    ),
  },
  { description: 'Lets the pod schedule onto nodes with a matching taint.' },
);

const SelectorOperator = (values: readonly string[]) =>
  StringEnum(values, { description: `How key relates to values: ${values.join(', ')}.` });

const LabelSelector = Type.Object(
  {
    matchLabels: Type.Optional(StringMap({ description: 'Labels that must all match.' })),
    matchExpressions: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Type.String({ description: 'Label key.' }),
            operator: SelectorOperator(['In', 'NotIn', 'Exists', 'DoesNotExist']),
            values: Type.Optional(
              Type.Array(Type.String({ description: 'A label value.' }), {
                description: 'Values for In and NotIn.',
              }),
            ),
          },
          { description: 'A label selector requirement.' },
        ),
        { description: 'Requirements that must all match.' },
      ),
    ),
  },
  { description: 'A label query over a set of objects.' },
);

const NodeSelectorRequirements = (description: string) =>
  Type.Array(
    Type.Object(
      {
        key: Type.String({ description: 'Label or field key.' }),
        operator: SelectorOperator(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
        values: Type.Optional(
          Type.Array(Type.String({ description: 'A value.' }), {
            description: 'Values for In, NotIn (several) and Gt, Lt (one integer).',
          }),
        ),
      },
      { description: 'A node selector requirement.' },
    ),
    { description },
  );

const NodeSelectorTerm = Type.Object(
  {
    matchExpressions: Type.Optional(NodeSelectorRequirements('Requirements on node labels.')),
    matchFields: Type.Optional(NodeSelectorRequirements('Requirements on node fields.')),
  },
  { description: 'Node requirements that must all match.' },
);

const Weight = Type.Integer({
  description: 'Weight in the range 1-100 added to a node that matches.',
  minimum: 1,
  maximum: 100,
});

const NodeAffinity = Type.Object(
  {
    requiredDuringSchedulingIgnoredDuringExecution: Type.Optional(
      Type.Object(
        {
          nodeSelectorTerms: Type.Array(NodeSelectorTerm, {
            description: 'Terms of which at least one must match.',
          }),
        },
        { description: 'Nodes the pod may only be scheduled onto.' },
      ),
    ),
    preferredDuringSchedulingIgnoredDuringExecution: Type.Optional(
      Type.Array(
        Type.Object(
          { weight: Weight, preference: NodeSelectorTerm },
          { description: 'A weighted node preference.' },
        ),
        { description: 'Nodes the scheduler prefers.' },
      ),
    ),
  },
  { description: 'Node affinity scheduling rules.' },
);

const PodAffinityTerm = Type.Object(
  {
    labelSelector: Type.Optional(LabelSelector),
    namespaceSelector: Type.Optional(LabelSelector),
    namespaces: Type.Optional(
      Type.Array(Type.String({ description: 'A namespace name.' }), {
        description: 'Namespaces the labelSelector applies to; empty means this namespace.',
      }),
    ),
    topologyKey: Type.String({
      description: 'Node label whose value defines co-location, such as kubernetes.io/hostname.',
    }),
  },
  { description: 'Pods this pod should (or should not) be co-located with.' },
);

function podAffinity(description: string) {
  return Type.Object(
    {
      requiredDuringSchedulingIgnoredDuringExecution: Type.Optional(
        Type.Array(PodAffinityTerm, { description: 'Terms that must all hold.' }),
      ),
      preferredDuringSchedulingIgnoredDuringExecution: Type.Optional(
        Type.Array(
          Type.Object(
            { weight: Weight, podAffinityTerm: PodAffinityTerm },
            { description: 'A weighted pod affinity term.' },
          ),
          { description: 'Terms the scheduler prefers.' },
        ),
      ),
    },
    { description },
  );
}

/** core/v1 Affinity (without the alpha fields matchLabelKeys / mismatchLabelKeys). */
export const Affinity = Type.Object(
  {
    nodeAffinity: Type.Optional(NodeAffinity),
    podAffinity: Type.Optional(podAffinity('Co-locate with pods that match.')),
    podAntiAffinity: Type.Optional(podAffinity('Keep away from pods that match.')),
  },
  { description: 'Scheduling constraints, as in a Pod spec.' },
);

const Id = (description: string) => Type.Integer({ description, minimum: 0, maximum: 2147483647 });

/** The pod-level fields of core/v1 PodSecurityContext that an MCP server may need to change. */
export const PodSecurityContext = Type.Object(
  {
    runAsUser: Type.Optional(Id('UID the containers run as. Defaults to 65532.')),
    runAsGroup: Type.Optional(Id('GID the containers run as. Defaults to 65532.')),
    fsGroup: Type.Optional(
      Id(
        'Group that owns the pod volumes, so the server and the bridge share them. Defaults to 65532.',
      ),
    ),
    supplementalGroups: Type.Optional(
      Type.Array(Id('A group ID.'), { description: 'Additional groups of the containers.' }),
    ),
    runAsNonRoot: Type.Optional(
      Type.Boolean({
        description: 'Refuse to start containers that run as root. Defaults to true.',
      }),
    ),
  },
  {
    description:
      'Pod security context, merged over the restricted default (non-root UID/GID 65532, seccomp RuntimeDefault).',
  },
);

/** metav1.Time: RFC 3339 in UTC, whole seconds. */
export const metaTime = (date: Date): string => date.toISOString().replace(/\.\d+Z$/, 'Z');

/** meta/v1 Condition's bound on `message`; the API server refuses a longer one. */
export const CONDITION_MESSAGE_MAX = 32768;

/** meta/v1 Condition. https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#typical-status-properties */
export const Condition = Type.Object(
  {
    type: Type.String({
      description: 'Type of the condition: Ready, Discovered or Drifted.',
      maxLength: 316,
    }),
    status: StringEnum(['True', 'False', 'Unknown'], {
      description: 'Status of the condition: True, False or Unknown.',
    }),
    observedGeneration: Type.Optional(
      Type.Integer({
        description: 'metadata.generation the condition was computed from.',
        minimum: 0,
      }),
    ),
    lastTransitionTime: Type.String({
      description: 'When the status last changed.',
      format: 'date-time',
    }),
    reason: Type.String({
      description: 'One CamelCase word saying why the condition has its status.',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    }),
    message: Type.String({
      description: 'What happened and what to do about it, for a human.',
      maxLength: CONDITION_MESSAGE_MAX,
    }),
  },
  { description: 'An observation of one aspect of the MCPServer.' },
);

export type EnvVar = Static<typeof EnvVar>;
export type EnvFromSource = Static<typeof EnvFromSource>;
export type ResourceRequirements = Static<typeof ResourceRequirements>;
export type Toleration = Static<typeof Toleration>;
export type Affinity = Static<typeof Affinity>;
export type PodSecurityContext = Static<typeof PodSecurityContext>;
export type Condition = Static<typeof Condition>;
export type LocalObjectReference = Static<typeof LocalObjectReference>;
