/**
 * The real node's network on the host: one Linux bridge that the pods hang off (through the CNI
 * `bridge` plugin) and that also carries the address the API server and CoreDNS listen on.
 *
 * Pod and Service addresses must never fall through to the machine's default route, which leads
 * off the machine. So before any component starts, the Service range and kwok's pod range (whose
 * fake pods own addresses that nothing answers) are routed onto the bridge: an address nobody
 * owns there fails on the machine itself (no ARP answer: EHOSTUNREACH), and kube-proxy's DNAT of a
 * real Service still works, because DNAT happens before the route is looked up. A blackhole route
 * would have dropped that DNAT'd traffic too.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const NODE_NETWORK = {
  bridge: 'mcpop-cni0',
  /** The host's address on the bridge: pods' gateway, the API server's advertised address, DNS. */
  gateway: '10.88.0.1',
  /** Addresses the real node's pods get (CNI host-local). */
  podSubnet: '10.88.0.0/24',
  prefixLength: 24,
  serviceCidr: '10.96.0.0/16',
  /** The cluster DNS Service's ClusterIP, which the kubelet writes into every pod's resolv.conf. */
  dnsServiceIp: '10.96.0.10',
  /** kwok hands its fake pods addresses from here; no process answers on them. */
  kwokPodCidr: '10.244.0.0/16',
} as const;

/**
 * The ranges routed onto the bridge so that they never reach the default route (the pod subnet is
 * on it already, as the bridge's own connected route).
 */
export const ROUTED_RANGES = [NODE_NETWORK.serviceCidr, NODE_NETWORK.kwokPodCidr] as const;

async function ip(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('ip', args);
  return stdout;
}

async function bridgeExists(): Promise<boolean> {
  try {
    await ip('link', 'show', 'dev', NODE_NETWORK.bridge);
    return true;
  } catch {
    return false;
  }
}

/** Creates the bridge with the gateway address and routes every cluster range onto it. */
export async function setUpNodeNetwork(): Promise<void> {
  if (!(await bridgeExists())) await ip('link', 'add', NODE_NETWORK.bridge, 'type', 'bridge');
  await ip(
    'addr',
    'replace',
    `${NODE_NETWORK.gateway}/${NODE_NETWORK.prefixLength}`,
    'dev',
    NODE_NETWORK.bridge,
  );
  await ip('link', 'set', NODE_NETWORK.bridge, 'up');
  for (const range of ROUTED_RANGES) {
    await ip('route', 'replace', range, 'dev', NODE_NETWORK.bridge);
  }
}

/** Removes the bridge; its address and routes go with it. Synchronous: it also runs at exit. */
export function tearDownNodeNetwork(): void {
  spawnSync('ip', ['link', 'delete', NODE_NETWORK.bridge], { stdio: 'ignore' });
}

/** The device the kernel would send a packet for `address` out of. */
export async function routeDevice(address: string): Promise<string | undefined> {
  const out = await ip('route', 'get', address);
  return /\bdev (\S+)/.exec(out)?.[1];
}
