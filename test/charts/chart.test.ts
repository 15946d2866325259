/**
 * The chart as `helm lint` and `helm template` (the real helm) see it, for the value sets users
 * install with: defaults, namespaced RBAC, an air-gapped registry, HA. The operator's flags are
 * checked by the operator's own parser, so a flag the controller does not know (or reads
 * differently) fails here rather than in a crash-looping pod.
 */
import { readFile } from 'node:fs/promises';
import type {
  V1Deployment,
  V1FlowSchema,
  V1PolicyRule,
  V1PodDisruptionBudget,
} from '@kubernetes/client-node';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRD_FILE } from '../../src/api/crd.ts';
import { parseControllerConfig } from '../../src/controller/config.ts';
import { CHART_DIR, Helm, only, type Rendered } from './helm.ts';

let helm: Helm;
beforeAll(async () => {
  helm = await Helm.create();
}, 600_000);
afterAll(() => helm?.close());

const NAMESPACE = 'mcp-system';
const FULLNAME = 'ops-mcp-operator';
const DIGEST = `sha256:${'ab'.repeat(32)}`;

const VALUE_SETS = {
  defaults: {},
  namespaced: { watchNamespaces: ['team-a', 'team-b'] },
  airGapped: {
    image: { registry: 'registry.internal:5000', digest: DIGEST, pullPolicy: 'Never' },
    imagePullSecrets: [{ name: 'mirror-credentials' }],
  },
  ha: { replicaCount: 2 },
} as const;

const deploymentOf = (objects: Rendered[]) =>
  only(objects, 'Deployment', FULLNAME) as unknown as V1Deployment;
const operatorContainer = (objects: Rendered[]) =>
  deploymentOf(objects).spec!.template.spec!.containers[0]!;

/** The controller configuration the rendered Deployment starts, read by the real parser. */
function configOf(objects: Rendered[]) {
  const [command, ...flags] = operatorContainer(objects).args ?? [];
  expect(command).toBe('controller');
  // What the Downward API sets in the pod (the env block of the Deployment).
  return parseControllerConfig(flags, { POD_NAME: 'ops-0', POD_NAMESPACE: NAMESPACE });
}

const rulesOf = (objects: Rendered[], kind: string, name: string, namespace?: string) =>
  objects.find(
    (o) =>
      o.kind === kind &&
      o.metadata.name === name &&
      (namespace === undefined || o.metadata.namespace === namespace),
  )?.rules as V1PolicyRule[] | undefined;

describe('helm lint', () => {
  it.each(Object.entries(VALUE_SETS))('passes with --strict for %s values', async (_, values) => {
    const result = await helm.run(
      ['lint', '--strict', CHART_DIR, '--namespace', NAMESPACE],
      values,
    );
    expect(result.stdout + result.stderr).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.code).toBe(0);
  });
});

describe('helm template, defaults', () => {
  let objects: Rendered[];
  beforeAll(async () => {
    objects = await helm.template(VALUE_SETS.defaults);
  });

  it('renders the operator, its RBAC, the metrics Service and the CRD; nothing optional', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      [
        `ClusterRole/${FULLNAME}`,
        `ClusterRoleBinding/${FULLNAME}`,
        'CustomResourceDefinition/mcpservers.mcp-operator.dev',
        `Deployment/${FULLNAME}`,
        `FlowSchema/${NAMESPACE}-${FULLNAME}-leader-election`,
        `Role/${FULLNAME}-leader-election`,
        `RoleBinding/${FULLNAME}-leader-election`,
        `Service/${FULLNAME}-metrics`,
        `ServiceAccount/${FULLNAME}`,
      ].sort(),
    );
  });

  it('starts a controller for every namespace, electing a leader on a Lease of its own', () => {
    const config = configOf(objects);
    expect(config.namespaces).toEqual([]);
    expect(config.leaderElection).toMatchObject({
      enabled: true,
      namespace: NAMESPACE,
      name: FULLNAME,
    });
    expect(config.bridgeImage).toBe('mcp-operator:0.1.0');
    expect(config.imagePullPolicy).toBe('IfNotPresent');
    expect(config.concurrency).toBe(32);
    expect(config.resyncPeriodMs).toBe(600_000);
  });

  it("ends a stopping leader's drain 10 s before the pod's grace period does", () => {
    const grace = deploymentOf(objects).spec!.template.spec!.terminationGracePeriodSeconds!;
    expect(grace).toBe(30);
    expect(configOf(objects).shutdownTimeoutMs).toBe((grace - 10) * 1_000);
  });

  it('grants the Lease by name, and only create without one', () => {
    expect(rulesOf(objects, 'Role', `${FULLNAME}-leader-election`)).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [FULLNAME],
        verbs: ['get', 'update', 'watch'],
      },
    ]);
  });

  it("gives the Lease requests the Role allows, and only those, the API server's leader-election priority", () => {
    const schema = only(objects, 'FlowSchema') as unknown as V1FlowSchema;
    const leaseVerbs = rulesOf(objects, 'Role', `${FULLNAME}-leader-election`)!.flatMap(
      (rule) => rule.verbs,
    );
    expect(schema.spec).toMatchObject({
      priorityLevelConfiguration: { name: 'leader-election' },
      rules: [
        {
          subjects: [
            { kind: 'ServiceAccount', serviceAccount: { name: FULLNAME, namespace: NAMESPACE } },
          ],
          resourceRules: [
            {
              verbs: leaseVerbs.sort(),
              apiGroups: ['coordination.k8s.io'],
              resources: ['leases'],
              namespaces: [NAMESPACE],
            },
          ],
        },
      ],
    });
    // Before the built-in service-accounts FlowSchema (9000), which matches every ServiceAccount.
    expect(schema.spec!.matchingPrecedence).toBeLessThan(9000);
  });

  it('runs as non-root under the restricted Pod Security Standard', () => {
    const pod = deploymentOf(objects).spec!.template.spec!;
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.containers[0]!.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('probes and serves metrics on the port the controller listens on', () => {
    const container = operatorContainer(objects);
    expect(configOf(objects).metricsAddress).toBe(':8080');
    expect(container.ports).toEqual([{ name: 'metrics', containerPort: 8080, protocol: 'TCP' }]);
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    const service = only(objects, 'Service') as { spec?: { ports?: unknown } };
    expect(service.spec?.ports).toEqual([
      { name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
    ]);
  });

  it("grants what the chart README's RBAC table says, no more, no less", async () => {
    const readme = (await readFile(join(CHART_DIR, 'README.md'), 'utf8'))
      .split('## What the operator may do, and why')[1]!
      .split('\n## ')[0]!;
    const documented = new Map<string, string>();
    for (const [, resources = '', verbs = ''] of readme.matchAll(
      /^\| (`[^|]+?) +\| ([^|]+?) +\|/gm,
    )) {
      for (const [, resource] of resources.matchAll(/`([^`]+)`/g)) documented.set(resource!, verbs);
    }
    const granted = new Map<string, string[]>();
    for (const rule of rulesOf(objects, 'ClusterRole', FULLNAME) ?? []) {
      for (const resource of rule.resources ?? []) {
        granted.set(resource, [...(granted.get(resource) ?? []), ...rule.verbs]);
      }
    }
    documented.delete('leases');
    expect(Object.fromEntries(documented)).toEqual(
      Object.fromEntries([...granted].map(([resource, verbs]) => [resource, verbs.join(', ')])),
    );
  });

  it('installs the committed CRD, marked to be kept on uninstall', async () => {
    const crd = only(objects, 'CustomResourceDefinition');
    const committed = load(await readFile(CRD_FILE, 'utf8')) as Rendered;
    expect(crd.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    expect(crd.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'Helm' });
    const strip = (o: Rendered) => ({ ...o, metadata: { name: o.metadata.name } });
    expect(strip(crd)).toEqual(strip(committed));
  });
});

describe('helm template, other value sets', () => {
  it('namespaced: a Role per watched namespace, nothing cluster-wide, --namespaces', async () => {
    const objects = await helm.template(VALUE_SETS.namespaced);
    const clusterWide = await helm.template(VALUE_SETS.defaults);
    expect(objects.filter((o) => o.kind?.startsWith('Cluster'))).toEqual([]);
    expect(configOf(objects).namespaces).toEqual(['team-a', 'team-b']);
    const clusterRules = rulesOf(clusterWide, 'ClusterRole', FULLNAME);
    for (const ns of ['team-a', 'team-b']) {
      expect(rulesOf(objects, 'Role', FULLNAME, ns)).toEqual(clusterRules);
      const binding = objects.find(
        (o) => o.kind === 'RoleBinding' && o.metadata.namespace === ns,
      ) as { subjects?: unknown[] } | undefined;
      expect(binding?.subjects).toEqual([
        { kind: 'ServiceAccount', name: FULLNAME, namespace: NAMESPACE },
      ]);
    }
  });

  it('discovery egress: denied and allowed ranges reach the controller as its flags', async () => {
    const defaults = configOf(await helm.template(VALUE_SETS.defaults)).discoveryEgress;
    expect(defaults).toMatchObject({ denied: [], allowed: [] });
    const egress = { deniedCIDRs: ['10.0.0.0/16', 'fd00::/8'], allowedCIDRs: ['10.0.5.0/24'] };
    const objects = await helm.template({ discovery: { egress } });
    expect(configOf(objects).discoveryEgress).toMatchObject({
      denied: ['10.0.0.0/16', 'fd00::/8'],
      allowed: ['10.0.5.0/24'],
    });
  });

  it('air-gapped: operator and bridge images from the mirror, pinned by digest', async () => {
    const objects = await helm.template(VALUE_SETS.airGapped);
    const image = `registry.internal:5000/mcp-operator@${DIGEST}`;
    const container = operatorContainer(objects);
    expect(container.image).toBe(image);
    expect(container.imagePullPolicy).toBe('Never');
    expect(configOf(objects)).toMatchObject({ bridgeImage: image, imagePullPolicy: 'Never' });
    expect(deploymentOf(objects).spec!.template.spec!.imagePullSecrets).toEqual([
      { name: 'mirror-credentials' },
    ]);
  });

  it('a bridge image of its own takes its own tag, never the operator digest', async () => {
    const objects = await helm.template({
      image: { registry: 'mirror.example', digest: DIGEST },
      bridgeImage: { repository: 'tools/mcp-bridge', tag: '1.2.3', pullPolicy: 'Always' },
    });
    expect(configOf(objects)).toMatchObject({
      bridgeImage: 'mirror.example/tools/mcp-bridge:1.2.3',
      imagePullPolicy: 'Always',
    });
  });

  it('HA: two replicas elect a leader and keep one through voluntary disruptions', async () => {
    const objects = await helm.template(VALUE_SETS.ha);
    expect(deploymentOf(objects).spec!.replicas).toBe(2);
    expect(configOf(objects).leaderElection.enabled).toBe(true);
    const pdb = only(objects, 'PodDisruptionBudget') as unknown as V1PodDisruptionBudget;
    expect(pdb.spec).toEqual({
      minAvailable: 1,
      selector: {
        matchLabels: {
          'app.kubernetes.io/name': 'mcp-operator',
          'app.kubernetes.io/instance': 'ops',
        },
      },
    });
  });

  it('without leader election: no Lease rules, and Recreate so two never run at once', async () => {
    const objects = await helm.template({ leaderElection: { enabled: false } });
    expect(configOf(objects).leaderElection.enabled).toBe(false);
    expect(objects.filter((o) => o.metadata.name?.endsWith('-leader-election'))).toEqual([]);
    expect(deploymentOf(objects).spec!.strategy).toEqual({ type: 'Recreate' });
    expect(objects.some((o) => o.kind === 'PodDisruptionBudget')).toBe(false);
  });

  it('crds.install=false and rbac.create=false leave the CRD and RBAC to someone else', async () => {
    const objects = await helm.template({
      crds: { install: false },
      rbac: { create: false },
      serviceAccount: { create: false, name: 'provided' },
    });
    expect(objects.map((o) => o.kind).sort()).toEqual(['Deployment', 'FlowSchema', 'Service']);
    expect(deploymentOf(objects).spec!.template.spec!.serviceAccountName).toBe('provided');
  });

  it('a ServiceMonitor scrapes the metrics Service when asked', async () => {
    const objects = await helm.template(
      { metrics: { serviceMonitor: { enabled: true, labels: { release: 'prometheus' } } } },
      { apiVersions: ['monitoring.coreos.com/v1/ServiceMonitor'] },
    );
    const monitor = only(objects, 'ServiceMonitor');
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(monitor.spec).toMatchObject({
      endpoints: [{ port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }],
    });
  });
});

describe('monitoring, when asked', () => {
  it('a PodMonitor scrapes the bridge of every stdio MCPServer, labelled with its name', async () => {
    const objects = await helm.template(
      { metrics: { bridgePodMonitor: { enabled: true, labels: { release: 'prometheus' } } } },
      { apiVersions: ['monitoring.coreos.com/v1/PodMonitor'] },
    );
    const monitor = only(objects, 'PodMonitor');
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(monitor.spec).toMatchObject({
      namespaceSelector: { any: true },
      selector: {
        matchLabels: {
          'app.kubernetes.io/name': 'mcp-server',
          'app.kubernetes.io/managed-by': 'mcp-operator',
        },
      },
      podMetricsEndpoints: [
        {
          port: 'mcp',
          path: '/metrics',
          relabelings: [
            {
              sourceLabels: ['__meta_kubernetes_pod_container_name'],
              regex: 'bridge',
              action: 'keep',
            },
            {
              sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_instance'],
              targetLabel: 'mcpserver',
            },
          ],
        },
      ],
    });
  });

  it('the dashboard ConfigMap carries the Grafana sidecar label, in the namespace asked for', async () => {
    const objects = await helm.template({
      metrics: { dashboard: { enabled: true, namespace: 'grafana' } },
    });
    const dashboard = only(objects, 'ConfigMap', `${FULLNAME}-dashboard`);
    expect(dashboard.metadata.namespace).toBe('grafana');
    expect(dashboard.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    const data = (dashboard as unknown as { data: Record<string, string> }).data;
    expect(JSON.parse(data['mcp-operator.json']!)).toMatchObject({ title: 'MCP servers' });
  });

  it('renders none of it by default', async () => {
    const kinds = (await helm.template({})).map((o) => o.kind);
    expect(kinds).not.toContain('PrometheusRule');
    expect(kinds).not.toContain('PodMonitor');
    expect(kinds).not.toContain('ConfigMap');
  });
});

describe('invalid values are refused with a message that names the mistake', () => {
  const cases: [string, unknown, string][] = [
    ['a misspelt key', { imagee: { tag: '1' } }, "additional properties 'imagee' not allowed"],
    [
      'a misspelt nested key',
      { image: { tagg: '1' } },
      "at '/image': additional properties 'tagg' not allowed",
    ],
    [
      'an unknown log level',
      { logLevel: 'verbose' },
      "at '/logLevel': value must be one of 'trace', 'debug', 'info', 'warn', 'error'",
    ],
    [
      'a digest without its algorithm',
      { image: { digest: 'ab'.repeat(32) } },
      "at '/image/digest'",
    ],
    ['zero replicas', { replicaCount: 0 }, "at '/replicaCount': minimum: got 0, want 1"],
    ['a namespace that cannot exist', { watchNamespaces: ['Team_A'] }, "at '/watchNamespaces/0'"],
    ['a duration without a unit', { resyncPeriod: '600' }, "at '/resyncPeriod'"],
    [
      'a discovery egress range that is a name',
      { discovery: { egress: { deniedCIDRs: ['metadata.google.internal'] } } },
      "at '/discovery/egress/deniedCIDRs/0'",
    ],
    [
      'replicas without leader election',
      { replicaCount: 3, leaderElection: { enabled: false } },
      'replicaCount > 1 needs leaderElection.enabled=true',
    ],
    [
      'a ServiceMonitor without the Service it scrapes',
      { metrics: { service: { enabled: false }, serviceMonitor: { enabled: true } } },
      'metrics.serviceMonitor.enabled needs metrics.service.enabled',
    ],
    [
      'a ServiceMonitor in a cluster without the Prometheus operator',
      { metrics: { serviceMonitor: { enabled: true } } },
      "metrics.serviceMonitor.enabled needs the Prometheus operator's ServiceMonitor CRD",
    ],
    [
      'alert rules in a cluster without the Prometheus operator',
      { metrics: { prometheusRule: { enabled: true } } },
      "metrics.prometheusRule.enabled needs the Prometheus operator's PrometheusRule CRD",
    ],
    [
      'a bridge PodMonitor in a cluster without the Prometheus operator',
      { metrics: { bridgePodMonitor: { enabled: true } } },
      "metrics.bridgePodMonitor.enabled needs the Prometheus operator's PodMonitor CRD",
    ],
    [
      'an alert delay Prometheus cannot read',
      { metrics: { prometheusRule: { toolsDrifted: { for: '1.5m' } } } },
      "at '/metrics/prometheusRule/toolsDrifted/for'",
    ],
    [
      'an unknown alert severity',
      { metrics: { prometheusRule: { operatorAbsent: { severity: 'page' } } } },
      "at '/metrics/prometheusRule/operatorAbsent/severity'",
    ],
    [
      'an existing ServiceAccount without its name',
      { serviceAccount: { create: false } },
      'serviceAccount.name is required when serviceAccount.create is false',
    ],
  ];

  it('a cluster older than the CRD needs', async () => {
    const result = await helm.run(['template', 'ops', CHART_DIR, '--kube-version', '1.30.4']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      'chart requires kubeVersion: >=1.31.0-0 which is incompatible with Kubernetes v1.30.4',
    );
  });

  it.each(cases)('%s', async (_, values, message) => {
    const result = await helm.run(['template', 'ops', CHART_DIR], values);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(message);
  });
});
