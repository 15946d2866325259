/**
 * The operator as separate processes against the real control plane: two replicas elect one
 * leader and the other takes over when it dies or stops; an operator killed in the middle of
 * its work and started again converges without duplicates or orphans.
 */
import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { OperatorProcess, stopAllOperators } from '../support/operator.ts';
import { cluster, writeCount } from './operator.ts';

const kc = kubeConfig();
const ns = useNamespace('procs', kc);
const k = cluster(kc, () => ns.name);
const kubeconfigPath = inject('kubeconfig');

beforeAll(() => installCrd(kc));
afterEach(() => stopAllOperators());
afterAll(() => stopAllOperators());

const WEB = { image: 'example.com/mcp/web:1', transport: 'streamable-http' as const, port: 3000 };

let started = 0;

/** An operator process of its own name, so that each has its own log. */
function operator(args: string[]): Promise<OperatorProcess> {
  started += 1;
  return OperatorProcess.start({
    name: `operator-${started}`,
    args: [`--namespaces=${ns.name}`, ...args],
    kubeconfig: { path: kubeconfigPath },
  });
}

const replica = () => operator(['--leader-elect', `--leader-election-namespace=${ns.name}`]);

async function leaseHolder(): Promise<string | undefined> {
  const lease = await kc
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: 'mcp-operator', namespace: ns.name });
  return lease.spec?.holderIdentity || undefined;
}

/** Waits until exactly one of `replicas` leads, and returns it and the others. */
async function electedAmong(replicas: OperatorProcess[], timeoutMs = 40_000) {
  await Promise.all(replicas.map((r) => r.url()));
  return waitFor(
    'one leader',
    async () => {
      const leading = await Promise.all(replicas.map((r) => r.isLeader()));
      if (leading.filter(Boolean).length !== 1) return undefined;
      const i = leading.indexOf(true);
      return { leader: replicas[i]!, others: replicas.filter((_, j) => j !== i) };
    },
    { timeoutMs },
  );
}

describe('two replicas', () => {
  it('elect one leader that reconciles; the standby writes nothing', async () => {
    // One after the other, so the standby does not take part in the race to create the Lease
    // (whose loser sees 409 on its POST: a write attempt).
    const leader = await replica();
    await electedAmong([leader]);
    const others = [await replica()];
    await others[0]!.url();
    await electedAmong([leader, ...others]);
    const became = await leader.waitForLog('became leader', (l) => l.msg === 'became leader');
    const identity = became['identity'];
    expect(await leaseHolder()).toBe(identity);
    await k.create('one', WEB);
    await k.waitForReady('one', 'True');
    expect(await writeCount(await leader.url())).toBeGreaterThan(0);
    expect(await writeCount(await others[0]!.url())).toBe(0);
  });

  it('hand over when the leader is killed: the standby takes the expired lease', async () => {
    const replicas = await Promise.all([replica(), replica()]);
    const { leader, others } = await electedAmong(replicas);
    const holder = await leaseHolder();
    await leader.kill();
    // client-go timings: the lease (15 s) must expire on the standby's clock first.
    const { leader: next } = await electedAmong(others, 60_000);
    expect(await leaseHolder()).not.toBe(holder);
    await k.create('two', WEB);
    await k.waitForReady('two', 'True');
    expect(await writeCount(await next.url())).toBeGreaterThan(0);
  });

  it('hand over at once when the leader stops gracefully: it releases the lease', async () => {
    const replicas = await Promise.all([replica(), replica()]);
    const { leader, others } = await electedAmong(replicas);
    const stopped = Date.now();
    await leader.stop();
    expect(leader.exit).toEqual({ code: 0, signal: null });
    await electedAmong(others, 10_000);
    expect(Date.now() - stopped).toBeLessThan(10_000);
    expect((await leader.lines()).map((l) => l.msg)).toContain('released leadership');
  });
});

describe('an operator killed mid-reconcile and started again', () => {
  it('converges with exactly one of each object per server, all owned', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `srv-${i}`);
    await Promise.all(names.map((name) => k.create(name, WEB)));
    const first = await operator(['--no-leader-elect']);
    await first.waitForLog('the first objects to be created', (l) => l.msg === 'created');
    await first.kill();
    const second = await operator(['--no-leader-elect']);
    await second.url();
    for (const name of names) await k.waitForReady(name, 'True', undefined, { timeoutMs: 60_000 });

    const servers = new Map(
      await Promise.all(names.map(async (n) => [n, (await k.get(n)).metadata?.uid] as const)),
    );
    const selector = {
      namespace: ns.name,
      labelSelector: 'app.kubernetes.io/managed-by=mcp-operator',
    };
    const lists = {
      Deployment: (await k.apps.listNamespacedDeployment(selector)).items,
      Service: (await k.core.listNamespacedService(selector)).items,
      ServiceAccount: (await k.core.listNamespacedServiceAccount(selector)).items,
    };
    for (const [kind, items] of Object.entries(lists)) {
      const srvItems = items.filter((o) => servers.has(o.metadata?.name ?? ''));
      expect(srvItems.map((o) => o.metadata?.name).sort(), kind).toEqual([...names].sort());
      for (const o of srvItems) {
        const controllers = o.metadata?.ownerReferences?.filter((r) => r.controller) ?? [];
        expect(controllers, `${kind}/${o.metadata?.name}`).toHaveLength(1);
        expect(controllers[0]?.uid).toBe(servers.get(o.metadata?.name ?? ''));
      }
    }
    const replicaSets = (await k.apps.listNamespacedReplicaSet({ namespace: ns.name })).items;
    const srvReplicaSets = replicaSets.filter((rs) =>
      servers.has(rs.metadata?.ownerReferences?.[0]?.name ?? ''),
    );
    // One rollout each: the restart did not render a different pod template.
    expect(srvReplicaSets).toHaveLength(names.length);
  });
});
