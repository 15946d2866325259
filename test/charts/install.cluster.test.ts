/**
 * The chart installed into the real control plane with the real helm, and the real operator run
 * as a local process authenticated as the chart's ServiceAccount (a TokenRequest token):
 *
 * - sufficient: with exactly the chart's rules it reconciles every example, updates, prunes,
 *   records events and leads on its Lease, and the API server refuses it nothing;
 * - not excessive: every permission the chart grants was used by one of those requests (seen
 *   by a recording proxy), but for the finalizers rule, which the API server checks inside an
 *   admission plugin rather than as a request; and taking a rule away (that one included)
 *   breaks the behaviour the chart names beside it;
 * - `helm uninstall` removes every chart object and keeps the CRD and the MCPServers.
 *
 * The chart runs namespaced (watchNamespaces), so this operator never touches other test files'
 * MCPServers; the cluster-wide RBAC renders the same rules (chart.test.ts) and is installed and
 * checked by SubjectAccessReview at the end. The CRD is only ever adopted here, never changed:
 * a changed CRD makes the API server reinitialize its storage (429s for a moment), which other
 * test files would see, so `helm upgrade` has a control plane of its own (upgrade.cluster.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type V1Deployment,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CRD_NAME } from '../../src/api/crd.ts';
import { API_GROUP, PLURAL } from '../../src/api/names.ts';
import { CHECKSUM_ANNOTATION } from '../../src/controller/render/pod.ts';
import { VERSION, type MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';
import { installCrd } from '../api/install-crd.ts';
import { createNamespace, deleteNamespace, kubeConfig, waitFor } from '../cluster/testing.ts';
import { EXAMPLES_DIR, kubectl, loadExamples } from '../examples/examples.ts';
import { CHART_DIR, Helm, only, parseManifests, type Rendered } from './helm.ts';
import { OperatorProcess } from '../support/operator.ts';
import { forbidden, serviceAccountKubeconfig } from './operator.ts';
import { allowed, permissionsOf, withoutPermission } from './rbac.ts';
import { RecordingProxy } from './recording-proxy.ts';

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const examples = await loadExamples();

/** A digest from the enforced example's baseline. */
const GET_SUM_DIGEST = examples
  .flatMap((e) => e.server.spec.tools?.approved?.tools ?? [])
  .find((t) => t.name === 'get-sum')!.digest!;

const RELEASE = 'ops';
const FULLNAME = 'ops-mcp-operator';
const RULES_ROLE = FULLNAME;
const LEASE_ROLE = `${FULLNAME}-leader-election`;
/** Granted but never requested, so the recording proxy cannot see them used. */
const UNUSED_HERE = new Set([
  // Checked inside the API server by the OwnerReferencesPermissionEnforcement admission plugin
  // (on in the test control plane), not a request of its own; its ablation below shows it used.
  `${API_GROUP}/mcpservers/finalizers:update`,
  // A standby's watch of the Lease (src/kube/leader.ts): the one replica here leads from its
  // first try and never waits as a standby.
  'coordination.k8s.io/leases:watch',
]);

let helm: Helm;
let tmp: string;
let opsNs: string;
let appsNs: string;
let manifest: Rendered[] = [];
let chartArgs: string[] = [];
let installed = false;
const running: OperatorProcess[] = [];

const sh = (args: string[], stdin?: string) => kubectl(inject('kubeconfig'), args, stdin);
async function shOk(args: string[], stdin?: string): Promise<string> {
  const result = await sh(args, stdin);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const caData = async (): Promise<string> => {
  const cluster = kc.getCurrentCluster()!;
  return cluster.caData ?? (await readFile(cluster.caFile!)).toString('base64');
};

async function startOperator(name: string, server = kc.getCurrentCluster()!.server) {
  const op = await OperatorProcess.start({
    dir: tmp,
    name,
    args: chartArgs,
    kubeconfig: {
      yaml: await serviceAccountKubeconfig(kc, {
        namespace: opsNs,
        serviceAccount: FULLNAME,
        server,
        caData: await caData(),
      }),
    },
    namespace: opsNs,
  });
  running.push(op);
  return op;
}

async function stopOperator(op: OperatorProcess) {
  await op.stop();
  const index = running.indexOf(op);
  if (index >= 0) running.splice(index, 1);
}

const getServer = async (name: string) =>
  (await custom.getNamespacedCustomObject({
    group: API_GROUP,
    version: VERSION,
    namespace: appsNs,
    plural: PLURAL,
    name,
  })) as MCPServer;

const readyOf = (server: MCPServer) =>
  server.status?.conditions?.find((c) => c.type === 'Ready') as
    { status: string; reason: string; message: string } | undefined;

/** Waits until the server's Ready condition has reason ApplyFailed, and returns it. */
const applyFailed = (name: string) =>
  waitFor('Ready=False ApplyFailed', async () => {
    const condition = readyOf(await getServer(name));
    return condition?.reason === 'ApplyFailed' ? condition : undefined;
  });

/** A merge patch on an MCPServer, as `kubectl patch --type=merge` sends it. */
async function patchServer(name: string, patch: unknown): Promise<void> {
  await shOk(['patch', 'mcps', name, '-n', appsNs, '--type=merge', '-p', JSON.stringify(patch)]);
}

/** Turns an example into a url server: every field of a deployed server goes (merge patch). */
async function moveToUrl(name: string, url: string): Promise<void> {
  const { spec } = examples.find((e) => e.server.metadata?.name === name)!.server;
  const kept = new Set(['auth', 'discovery', 'tools']);
  const removed = Object.keys(spec).filter((key) => !kept.has(key));
  await patchServer(name, {
    spec: { ...Object.fromEntries(removed.map((key) => [key, null])), url },
  });
}

async function createServer(name: string, extra: Record<string, unknown> = {}): Promise<void> {
  await custom.createNamespacedCustomObject({
    group: API_GROUP,
    version: VERSION,
    namespace: appsNs,
    plural: PLURAL,
    body: {
      apiVersion: `${API_GROUP}/${VERSION}`,
      kind: 'MCPServer',
      metadata: { name },
      spec: {
        image: 'node:24-alpine',
        transport: 'stdio',
        command: ['npx', '-y', 'server'],
        ...extra,
      },
    },
  });
}

const exists = async (read: () => Promise<unknown>) =>
  read().then(
    () => true,
    (err: { code?: number }) => {
      if (err.code === 404) return false;
      throw err;
    },
  );

const roleRules = (name: string, namespace: string) =>
  (manifest.find(
    (o) => o.kind === 'Role' && o.metadata.name === name && o.metadata.namespace === namespace,
  )?.rules ?? []) as V1PolicyRule[];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'mcp-operator-chart-'));
  helm = await Helm.create({ binary: inject('helm'), kubeconfig: inject('kubeconfig') });
  [opsNs, appsNs] = await Promise.all([
    createNamespace(kc, 'chart-ops'),
    createNamespace(kc, 'chart-apps'),
  ]);
  // The operator's pods must pass the restricted Pod Security Standard.
  await shOk(['label', 'namespace', opsNs, 'pod-security.kubernetes.io/enforce=restricted']);
  // Other test files install the CRD with kubectl-style apply; a release adopts it the way a
  // user who did the same would (chart README, "The CRD already exists").
  await installCrd(kc);
  await shOk(['label', '--overwrite', 'crd', CRD_NAME, 'app.kubernetes.io/managed-by=Helm']);
  await shOk([
    'annotate',
    '--overwrite',
    'crd',
    CRD_NAME,
    `meta.helm.sh/release-name=${RELEASE}`,
    `meta.helm.sh/release-namespace=${opsNs}`,
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all(running.map((op) => op.stop()));
  if (installed) await helm.run(['uninstall', RELEASE, '-n', opsNs, '--wait']);
  await Promise.all([opsNs, appsNs].filter(Boolean).map((ns) => deleteNamespace(kc, ns)));
  await helm?.close();
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
}, 180_000);

describe('helm install', () => {
  it('installs an HA, namespaced operator whose every object the API server accepts', async () => {
    const values = { watchNamespaces: [appsNs], replicaCount: 2 };
    const out = await helm.ok(
      ['install', RELEASE, CHART_DIR, '-n', opsNs, '--wait', '--timeout', '120s'],
      values,
    );
    installed = true;
    expect(out).toContain(`It manages MCPServers in: ${appsNs}.`);
    expect(out).toContain('Uninstalling this release leaves the MCPServer CRD');
    manifest = parseManifests(await helm.ok(['get', 'manifest', RELEASE, '-n', opsNs]));
    const objects = KubernetesObjectApi.makeApiClient(kc);
    for (const obj of manifest) {
      const header = {
        apiVersion: obj.apiVersion!,
        kind: obj.kind!,
        metadata: { name: obj.metadata.name!, namespace: obj.metadata.namespace! },
      };
      expect(await exists(() => objects.read(header)), `${obj.kind}/${obj.metadata.name}`).toBe(
        true,
      );
    }
    // --wait returned: both replicas were admitted under restricted Pod Security and are Ready.
    const deployment = await apps.readNamespacedDeployment({ name: FULLNAME, namespace: opsNs });
    expect(deployment.status?.readyReplicas).toBe(2);
    expect(manifest.some((o) => o.kind === 'PodDisruptionBudget')).toBe(true);
    const container = (only(manifest, 'Deployment') as unknown as V1Deployment).spec!.template.spec!
      .containers[0]!;
    chartArgs = container.args!.slice(1);
  });
});

type Until = typeof waitFor;

const deploymentOf = (name: string) => apps.readNamespacedDeployment({ name, namespace: appsNs });
const gone = async (read: () => Promise<unknown>) => !(await exists(read));

/**
 * What the recorded operator is taken through, step by step: between them, every code path of
 * the operator that calls the API server.
 */
const SCENARIO: { step: string; run: (until: Until) => Promise<void> }[] = [
  {
    step: 'every example is reconciled into objects it owns, with status',
    run: async (until) => {
      await until(
        'every example reconciled',
        async () => {
          for (const { server } of examples) {
            const stored = await getServer(server.metadata.name!);
            if (stored.status?.observedGeneration !== stored.metadata?.generation) return false;
            if (readyOf(stored) === undefined) return false;
          }
          return true;
        },
        { timeoutMs: 60_000 },
      );
      for (const { server } of examples.filter((e) => e.server.spec.image)) {
        const name = server.metadata.name!;
        const owner = (await deploymentOf(name)).metadata?.ownerReferences?.[0];
        expect(owner).toMatchObject({ kind: 'MCPServer', name });
        await core.readNamespacedService({ name, namespace: appsNs });
      }
      await core.readNamespacedConfigMap({ name: 'everything-enforced-policy', namespace: appsNs });
      // Created by the operator (a POST, never updated): the enforced bridge's discovery token.
      await core.readNamespacedSecret({ name: 'everything-enforced-discovery', namespace: appsNs });
      expect(readyOf(await getServer('remote'))?.reason).toBe('External');
    },
  },
  {
    step: 'Ready follows the Deployment and its Pods (kwok runs them)',
    run: async (until) => {
      const ready = async () => readyOf(await getServer('everything'))?.status === 'True';
      await until('everything Ready', ready, { timeoutMs: 60_000 });
    },
  },
  {
    step: 'an update patches the Deployment',
    run: async (until) => {
      await patchServer('everything', { spec: { replicas: 2 } });
      await until('scaled', async () => (await deploymentOf('everything')).spec?.replicas === 2);
    },
  },
  {
    step: 'a server that moves to a url has its Deployment, Service and ServiceAccount pruned',
    run: async (until) => {
      await moveToUrl('everything-http', 'http://mcp.example.com/mcp');
      await until('pruned', () => gone(() => deploymentOf('everything-http')));
    },
  },
  {
    step: "an approved baseline kept in a ConfigMap is read into the bridge's policy",
    run: async (until) => {
      await core.createNamespacedConfigMap({
        namespace: appsNs,
        body: {
          metadata: { name: 'approved-tools' },
          data: { 'tools.yaml': dump([{ name: 'get-sum', digest: GET_SUM_DIGEST }]) },
        },
      });
      await createServer('baseline-in-configmap', {
        tools: { driftPolicy: 'Enforce', approved: { configMapRef: { name: 'approved-tools' } } },
      });
      await until('the policy made from the ConfigMap', async () => {
        const policy = await core
          .readNamespacedConfigMap({ name: 'baseline-in-configmap-policy', namespace: appsNs })
          .catch(() => undefined);
        return policy?.data?.['policy.json']?.includes(GET_SUM_DIGEST);
      });
    },
  },
  {
    step: 'enforcement off prunes the policy ConfigMap; the discovery token goes with the bridge',
    run: async (until) => {
      const token = () =>
        core.readNamespacedSecret({ name: 'everything-enforced-discovery', namespace: appsNs });
      const before = await token();
      await patchServer('everything-enforced', { spec: { tools: { driftPolicy: 'Warn' } } });
      await until('pruned', () =>
        gone(() =>
          core.readNamespacedConfigMap({ name: 'everything-enforced-policy', namespace: appsNs }),
        ),
      );
      // Under Warn the operator still long-polls the bridge's change feed with it.
      expect((await token()).metadata?.uid).toBe(before.metadata?.uid);
      // Without a bridge there is nothing to unlock: the Secret goes.
      await moveToUrl('everything-enforced', 'http://mcp.example.com/mcp');
      await until('the Secret pruned', () => gone(token));
    },
  },
  {
    step: 'a changed Secret that the server reads at start rolls its pods',
    run: async (until) => {
      const checksum = async () =>
        (await deploymentOf('everything')).spec?.template.metadata?.annotations?.[
          CHECKSUM_ANNOTATION
        ];
      const secret = (value: string) => ({
        metadata: { name: 'everything-env' },
        stringData: { GREETING: value },
      });
      await core.createNamespacedSecret({ namespace: appsNs, body: secret('hello') });
      await patchServer('everything', {
        spec: { envFrom: [{ secretRef: { name: 'everything-env' } }] },
      });
      const first = await until('the Secret in the checksum', async () =>
        (await deploymentOf('everything')).spec?.template.spec?.containers[0]?.envFrom
          ? checksum()
          : undefined,
      );
      await core.replaceNamespacedSecret({
        name: 'everything-env',
        namespace: appsNs,
        body: secret('bonjour'),
      });
      await until('the pods rolled', async () => (await checksum()) !== first);
    },
  },
  {
    step: 'an owned object deleted twice is restored twice, and the Event is counted',
    run: async (until) => {
      for (let i = 0; i < 2; i++) {
        await core.deleteNamespacedService({ name: 'time', namespace: appsNs });
        await until('restored', () =>
          exists(() => core.readNamespacedService({ name: 'time', namespace: appsNs })),
        );
      }
      await until('an Event counted twice', async () => {
        const events = await core.listNamespacedEvent({
          namespace: appsNs,
          fieldSelector: 'involvedObject.name=time,reason=Applied',
        });
        return events.items.some(
          (e) => e.message === 'Applied Service/time.' && (e.count ?? 0) >= 2,
        );
      });
    },
  },
];

describe("the operator as the chart's ServiceAccount", () => {
  it('reconciles every example, and is granted exactly what it uses', async () => {
    // The url example's token; the value is made up here and never printed.
    await core.createNamespacedSecret({
      namespace: appsNs,
      body: {
        metadata: { name: 'remote-mcp-token' },
        stringData: { token: randomBytes(16).toString('hex') },
      },
    });
    await shOk(['apply', '-n', appsNs, '-f', EXAMPLES_DIR]);
    const ca = Buffer.from(await caData(), 'base64');
    const proxy = await RecordingProxy.start(kc.getCurrentCluster()!.server, ca);
    let op: OperatorProcess | undefined;
    try {
      const recorded = await startOperator('recorded', proxy.url);
      op = recorded;
      const until: Until = (what, condition, options) =>
        recorded.during(waitFor(what, condition, options));
      for (const { step, run } of SCENARIO) {
        await run(until).catch((err: Error) => {
          throw new Error(`${step}: ${err.message}`, { cause: err });
        });
      }
      // SIGTERM: a graceful stop releases the Lease.
      await stopOperator(recorded);
      expect(recorded.exit?.code).toBe(0);
    } finally {
      if (op !== undefined) await stopOperator(op);
      await proxy.close();
    }

    const refused = proxy.requests.filter((r) => r.status === 401 || r.status === 403);
    expect(refused).toEqual([]);
    const granted = permissionsOf([
      ...roleRules(RULES_ROLE, appsNs),
      ...roleRules(LEASE_ROLE, opsNs),
    ]);
    const used = proxy.permissions();
    expect([...used].filter((p) => !granted.has(p)).sort()).toEqual([]);
    expect([...granted].filter((p) => !used.has(p) && !UNUSED_HERE.has(p)).sort()).toEqual([]);
  });
});

interface Ablation {
  permission: string;
  /** The Role that grants it, and where. */
  role: () => { name: string; namespace: string };
  behaviour: string;
  before?: () => Promise<void>;
  check: (op: OperatorProcess) => Promise<void>;
}

const rulesRole = () => ({ name: RULES_ROLE, namespace: appsNs });
const leaseRole = () => ({ name: LEASE_ROLE, namespace: opsNs });

async function neverReady(op: OperatorProcess): Promise<void> {
  const readyz = await fetch(`${await op.url()}/readyz`);
  expect(readyz.status).toBe(503);
}

const ABLATIONS: Ablation[] = [
  {
    permission: `${API_GROUP}/mcpservers:list`,
    role: rulesRole,
    behaviour: 'it sees no MCPServer and never becomes ready',
    check: async (op) => {
      await op.waitForLog('list mcpservers refused', forbidden('list', 'mcpservers'));
      await neverReady(op);
    },
  },
  {
    permission: `${API_GROUP}/mcpservers/status:patch`,
    role: rulesRole,
    behaviour: 'a server gets its objects but no status',
    check: async (op) => {
      await createServer('no-status');
      await op.waitForLog('status write refused', forbidden('patch', 'mcpservers/status'));
      expect((await getServer('no-status')).status).toBeUndefined();
    },
  },
  {
    permission: `${API_GROUP}/mcpservers/finalizers:update`,
    role: rulesRole,
    behaviour:
      'objects with a blockOwnerDeletion owner reference are refused: a new server stays ApplyFailed, and its status says why',
    check: async (op) => {
      await createServer('no-finalizers');
      const ready = await op.during(applyFailed('no-finalizers'));
      expect(ready.message).toContain('cannot set blockOwnerDeletion');
      expect(ready.message).toContain('finalizers');
      expect(op.exit).toBeUndefined();
    },
  },
  {
    permission: 'apps/deployments:create',
    role: rulesRole,
    behaviour: 'a new server stays ApplyFailed, and its status says why',
    check: async (op) => {
      await createServer('no-create');
      const ready = await op.during(applyFailed('no-create'));
      expect(ready.message).toContain('cannot create resource "deployments"');
      expect(op.exit).toBeUndefined();
    },
  },
  {
    permission: '/services:delete',
    role: rulesRole,
    behaviour: 'a server moved to a url keeps its stale Service',
    check: async (op) => {
      await moveToUrl('time', 'http://time.example/mcp');
      await op.waitForLog('prune refused', forbidden('delete', 'services'));
      expect(
        await exists(() => core.readNamespacedService({ name: 'time', namespace: appsNs })),
      ).toBe(true);
    },
  },
  {
    permission: '/pods:list',
    role: rulesRole,
    behaviour: 'it cannot read why pods are not Ready, so it never becomes ready',
    check: async (op) => {
      await op.waitForLog('list pods refused', forbidden('list', 'pods'));
      await neverReady(op);
    },
  },
  {
    permission: '/secrets:get',
    role: rulesRole,
    behaviour: "discovery cannot send a server's token, and its status says so",
    check: async (op) => {
      await custom.createNamespacedCustomObject({
        group: API_GROUP,
        version: VERSION,
        namespace: appsNs,
        plural: PLURAL,
        body: {
          apiVersion: `${API_GROUP}/${VERSION}`,
          kind: 'MCPServer',
          metadata: { name: 'no-token' },
          spec: {
            url: 'http://no-token.example/mcp',
            auth: { secretRef: { name: 'remote-mcp-token' } },
          },
        },
      });
      const discovered = await op.during(
        waitFor('Discovered=False', async () =>
          (await getServer('no-token')).status?.conditions?.find(
            (c) => c.type === 'Discovered' && c.status === 'False',
          ),
        ),
      );
      expect(discovered.message).toContain('cannot get resource "secrets"');
    },
  },
  {
    permission: '/secrets:create',
    role: rulesRole,
    behaviour:
      "an enforced server's bridge never gets its discovery token: it stays ApplyFailed, and its status says why",
    check: async (op) => {
      await createServer('no-discovery-token', {
        tools: {
          driftPolicy: 'Enforce',
          approved: { tools: [{ name: 'get-sum', digest: GET_SUM_DIGEST }] },
        },
      });
      const ready = await op.during(applyFailed('no-discovery-token'));
      expect(ready.message).toContain('cannot create resource "secrets"');
      expect(
        await exists(() => deploymentOf('no-discovery-token')),
        'no Deployment whose bridge would wait for a missing Secret',
      ).toBe(false);
    },
  },
  {
    permission: '/secrets:list',
    role: rulesRole,
    behaviour: 'it cannot see which Secrets changed (pod rolls), so it never becomes ready',
    check: async (op) => {
      await op.waitForLog('list secrets refused', forbidden('list', 'secrets'));
      await neverReady(op);
    },
  },
  {
    permission: '/events:create',
    role: rulesRole,
    behaviour: 'kubectl describe shows no Events',
    check: async (op) => {
      await createServer('no-events');
      await op.waitForLog(
        'event refused',
        (l) => l.msg === 'could not record an event' && forbidden('create', 'events')(l),
      );
    },
  },
  {
    permission: 'coordination.k8s.io/leases:create',
    role: leaseRole,
    behaviour: 'without its Lease it never leads, so nothing is reconciled',
    before: async () => {
      await kc
        .makeApiClient(CoordinationV1Api)
        .deleteNamespacedLease({ name: FULLNAME, namespace: opsNs });
    },
    check: async (op) => {
      await op.waitForLog('create lease refused', forbidden('create', 'leases'));
      const since = Date.now();
      await createServer('no-leader');
      // Still campaigning, and still refused, well after the server was created.
      await op.waitForLog(
        'a later refused attempt',
        (l) => forbidden('create', 'leases')(l) && Number(l.time) > since + 3_000,
        15_000,
      );
      expect((await getServer('no-leader')).status).toBeUndefined();
    },
  },
];

describe('a narrower Role breaks the behaviour the chart names beside the rule', () => {
  const sa = () => ({ namespace: opsNs, name: FULLNAME });

  it.each(ABLATIONS.map((a) => [a.permission, a.behaviour, a] as const))(
    'without %s, %s',
    async (permission, _, ablation) => {
      const { name, namespace } = ablation.role();
      const role = await rbac.readNamespacedRole({ name, namespace });
      const original = role.rules ?? [];
      await rbac.replaceNamespacedRole({
        name,
        namespace,
        body: { ...role, rules: withoutPermission(original, permission) },
      });
      let op: OperatorProcess | undefined;
      try {
        await waitFor(
          'RBAC to refuse it',
          async () => !(await allowed(kc, sa(), permission, namespace)),
        );
        await ablation.before?.();
        op = await startOperator(`without-${permission.replace(/[^a-z]+/g, '-')}`);
        await ablation.check(op);
      } finally {
        // Stopped whatever happened: a leftover operator would hold the Lease for the next case.
        if (op !== undefined) await stopOperator(op);
        const current = await rbac.readNamespacedRole({ name, namespace });
        await rbac.replaceNamespacedRole({
          name,
          namespace,
          body: { ...current, rules: original },
        });
        await waitFor('RBAC to allow it again', () => allowed(kc, sa(), permission, namespace));
      }
    },
  );
});

describe('helm uninstall', () => {
  const serverNames = async () =>
    (
      (await custom.listNamespacedCustomObject({
        group: API_GROUP,
        version: VERSION,
        namespace: appsNs,
        plural: PLURAL,
      })) as { items: MCPServer[] }
    ).items
      .map((s) => s.metadata.name!)
      .sort();

  it('helm uninstall removes every chart object; the CRD and the MCPServers stay', async () => {
    const before = await serverNames();
    expect(before.length).toBeGreaterThanOrEqual(examples.length);
    await helm.ok(['uninstall', RELEASE, '-n', opsNs, '--wait', '--timeout', '120s']);
    installed = false;
    const objects = KubernetesObjectApi.makeApiClient(kc);
    for (const obj of manifest.filter((o) => o.kind !== 'CustomResourceDefinition')) {
      const header = {
        apiVersion: obj.apiVersion!,
        kind: obj.kind!,
        metadata: { name: obj.metadata.name!, namespace: obj.metadata.namespace! },
      };
      expect(await exists(() => objects.read(header)), `${obj.kind}/${obj.metadata.name}`).toBe(
        false,
      );
    }
    // Listed by the chart's labels, as a user would look for leftovers: only the kept CRD.
    const chartLabels = `app.kubernetes.io/name=mcp-operator,app.kubernetes.io/instance=${RELEASE}`;
    const kinds = 'all,serviceaccounts,roles,rolebindings,poddisruptionbudgets,configmaps,secrets';
    for (const ns of [opsNs, appsNs]) {
      await waitFor(`nothing of the release left in ${ns}`, async () => {
        const left = await shOk(['get', kinds, '-n', ns, '-l', chartLabels, '-o', 'name']);
        return left === '';
      });
    }
    const clusterWide = await shOk([
      'get',
      'clusterroles,clusterrolebindings,crds',
      '-l',
      chartLabels,
      '-o',
      'name',
    ]);
    expect(clusterWide.trim()).toBe(`customresourcedefinition.apiextensions.k8s.io/${CRD_NAME}`);
    const crd = await kc
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: CRD_NAME });
    expect(crd.metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(await serverNames()).toEqual(before);
    // The MCP servers keep running: their objects belong to the MCPServers, not to the release.
    expect(
      await exists(() => apps.readNamespacedDeployment({ name: 'everything', namespace: appsNs })),
    ).toBe(true);
  });
});

describe('cluster-wide RBAC', () => {
  it('binds the same rules in every namespace with a ClusterRole, removed on uninstall', async () => {
    const ns = await createNamespace(kc, 'chart-cw');
    const sa = { namespace: ns, name: 'cw-mcp-operator' };
    try {
      await helm.ok(['install', 'cw', CHART_DIR, '-n', ns, '--wait', '--timeout', '120s'], {
        crds: { install: false },
      });
      for (const namespace of [appsNs, 'default', '']) {
        expect(await allowed(kc, sa, `${API_GROUP}/mcpservers:watch`, namespace)).toBe(true);
        expect(await allowed(kc, sa, 'apps/deployments:create', namespace)).toBe(true);
      }
      // Nothing beyond the rules: the operator never updates Secrets, never writes Pods.
      expect(await allowed(kc, sa, '/secrets:update', 'default')).toBe(false);
      expect(await allowed(kc, sa, '/pods:delete', 'default')).toBe(false);
      await helm.ok(['uninstall', 'cw', '-n', ns, '--wait']);
      expect(await exists(() => rbac.readClusterRole({ name: 'cw-mcp-operator' }))).toBe(false);
      expect(await allowed(kc, sa, `${API_GROUP}/mcpservers:watch`, appsNs)).toBe(false);
    } finally {
      await helm.run(['uninstall', 'cw', '-n', ns]);
      await deleteNamespace(kc, ns);
    }
  });
});
