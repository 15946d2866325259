/**
 * API Priority and Fairness for the operator's Lease, on the real API server with the chart
 * installed by the real helm: a request's FlowSchema and priority level are what the API server
 * itself reports in every response (X-Kubernetes-PF-FlowSchema-UID and
 * X-Kubernetes-PF-PriorityLevel-UID). Requests are sent as the chart's ServiceAccount with a
 * TokenRequest token, as its pod would send them; the operator's pod is not needed for that and
 * is kept from starting (an image that is never pulled), so it takes no CPU from other tests.
 */
import { readFile } from 'node:fs/promises';
import { CoreV1Api, FlowcontrolApiserverV1Api } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, deleteNamespace, kubeConfig, waitFor } from '../cluster/testing.ts';
import { CHART_DIR, Helm } from './helm.ts';

const kc = kubeConfig();
const flowControl = kc.makeApiClient(FlowcontrolApiserverV1Api);

const RELEASE = 'apf';
const FULLNAME = `${RELEASE}-mcp-operator`;
/** The Lease the operator elects its leader on: named after the release (chart helpers). */
const LEASE = FULLNAME;
const LEASES = 'apis/coordination.k8s.io/v1/namespaces';

let helm: Helm | undefined;
let namespace: string;
let otherNamespace: string;
let installed = false;
let token: string;
let agent: Agent;

const values = (flowSchema: boolean) => ({
  watchNamespaces: [namespace],
  crds: { install: false },
  leaderElection: { enabled: true, flowSchema },
  image: { tag: 'never-pulled', pullPolicy: 'Never' },
});

beforeAll(async () => {
  helm = await Helm.create({ binary: inject('helm'), kubeconfig: inject('kubeconfig') });
  [namespace, otherNamespace] = await Promise.all([
    createNamespace(kc, 'chart-apf'),
    createNamespace(kc, 'chart-apf-other'),
  ]);
  await helm.ok(['install', RELEASE, CHART_DIR, '-n', namespace], values(true));
  installed = true;
  const issued = await kc.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: FULLNAME,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  token = issued.status!.token!;
  const cluster = kc.getCurrentCluster()!;
  const ca = cluster.caData
    ? Buffer.from(cluster.caData, 'base64')
    : await readFile(cluster.caFile!);
  agent = new Agent({ connect: { ca } });
}, 120_000);

afterAll(async () => {
  await agent?.close();
  if (installed) await helm!.run(['uninstall', RELEASE, '-n', namespace]);
  await Promise.all(
    [namespace, otherNamespace].filter(Boolean).map((ns) => deleteNamespace(kc, ns)),
  );
  await helm?.close();
}, 120_000);

interface Classified {
  status: number;
  flowSchema: string | undefined;
  priorityLevel: string | undefined;
}

/** Sends one request as the chart's ServiceAccount; how the API server classified it. */
async function asOperator(method: 'GET' | 'POST', path: string, body?: unknown) {
  const response = await request(`${kc.getCurrentCluster()!.server}/${path}`, {
    method,
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await response.body.dump();
  const header = (name: string) => response.headers[name] as string | undefined;
  return {
    status: response.statusCode,
    flowSchema: header('x-kubernetes-pf-flowschema-uid'),
    priorityLevel: header('x-kubernetes-pf-prioritylevel-uid'),
  } satisfies Classified;
}

const uidOfFlowSchema = async (name: string) =>
  (await flowControl.readFlowSchema({ name })).metadata!.uid!;
const uidOfPriorityLevel = async (name: string) =>
  (await flowControl.readPriorityLevelConfiguration({ name })).metadata!.uid!;

const leaseBody = () => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: LEASE, namespace },
  spec: { holderIdentity: 'test', leaseDurationSeconds: 15 },
});

describe('the chart FlowSchema', () => {
  it("puts the operator's Lease requests in the leader-election priority level", async () => {
    const ours = await uidOfFlowSchema(`${namespace}-${FULLNAME}-leader-election`);
    const leaderElection = await uidOfPriorityLevel('leader-election');
    // The API server's FlowSchema informer may not have the new object yet.
    const created = await waitFor(
      'the Lease create classified by the chart FlowSchema',
      async () => {
        const sent = await asOperator('POST', `${LEASES}/${namespace}/leases`, leaseBody());
        return sent.flowSchema === ours ? sent : undefined;
      },
    );
    expect(created).toEqual({ status: 201, flowSchema: ours, priorityLevel: leaderElection });
    const read = await asOperator('GET', `${LEASES}/${namespace}/leases/${LEASE}`);
    expect(read).toEqual({ status: 200, flowSchema: ours, priorityLevel: leaderElection });
  });

  it("leaves the ServiceAccount's other requests, and Leases elsewhere, where they were", async () => {
    const serviceAccounts = await uidOfFlowSchema('service-accounts');
    const workloadLow = await uidOfPriorityLevel('workload-low');
    const elsewhere = { flowSchema: serviceAccounts, priorityLevel: workloadLow };
    // RBAC refuses this one (403), but the API server classifies a request before it authorizes it.
    expect(await asOperator('GET', `${LEASES}/${otherNamespace}/leases/${LEASE}`)).toEqual({
      status: 403,
      ...elsewhere,
    });
    expect(await asOperator('GET', `api/v1/namespaces/${namespace}/configmaps`)).toEqual({
      status: 200,
      ...elsewhere,
    });
  });

  it('is gone with leaderElection.flowSchema=false, and Lease requests fall back to workload-low', async () => {
    await helm!.ok(['upgrade', RELEASE, CHART_DIR, '-n', namespace], values(false));
    const serviceAccounts = await uidOfFlowSchema('service-accounts');
    const fellBack = await waitFor('the Lease read classified by service-accounts', async () => {
      const sent = await asOperator('GET', `${LEASES}/${namespace}/leases/${LEASE}`);
      return sent.flowSchema === serviceAccounts ? sent : undefined;
    });
    expect(fellBack).toEqual({
      status: 200,
      flowSchema: serviceAccounts,
      priorityLevel: await uidOfPriorityLevel('workload-low'),
    });
  });
});
