/**
 * A real node that joins the test control plane: containerd (with its CRI plugin) runs the pods
 * through runc, the CNI `bridge` plugin wires them to the host, the kubelet registers the node,
 * kube-proxy (iptables mode) makes Services work, and CoreDNS, on the host, answers for
 * `*.svc.cluster.local`. Pods really run here: our image, the bridge sidecar and its FIFOs, the
 * operator installed by Helm.
 *
 * The node is tainted (REAL_NODE_TAINT): only pods that tolerate it land here; every other pod
 * keeps going to the kwok nodes, where nothing runs.
 *
 * Settings this machine kind needs (cgroup v1, no CAP_SYS_RESOURCE):
 * - containerd's CRI `restrict_oom_score_adj`, or every sandbox fails writing oom_score_adj;
 * - kubelet `failCgroupV1: false` and the cgroupfs driver;
 * - a pause image built here (no registry): kubernetes' own pause.c, compiled statically.
 *
 * One real node per machine at a time: a kubelet owns the machine's `kubepods` cgroups and
 * kube-proxy its iptables chains. A lock file serialises test runs; the holder's leftovers are
 * cleaned up by the next run when the holder died without stopping (SIGKILL).
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync, type Stats } from 'node:fs';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dump } from 'js-yaml';
import { DOCKER_CLI, docker, ensureDocker } from '../images/docker.ts';
import { cacheRoot, type Binaries, type Log } from './build.ts';
import { NODE_NETWORK, setUpNodeNetwork, tearDownNodeNetwork } from './network.ts';
import { issueClientCertificate, type Pki } from './pki.ts';
import { freePorts } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';
import {
  cleanUpOnExit,
  collect,
  exitCode,
  isAlive,
  runWithInput,
  startProcess,
  stopProcess,
  type ManagedProcess,
} from './processes.ts';

const execFileAsync = promisify(execFile);

export const REAL_NODE_NAME = 'real-node';
/** Pods meant for the real node tolerate this taint and select this label. */
export const REAL_NODE_TAINT = { key: 'mcp-operator.dev/real-node', effect: 'NoSchedule' } as const;
export const REAL_NODE_LABEL = { key: 'mcp-operator.dev/real-node', value: 'true' } as const;
/** What a pod spec needs to run on the real node. */
export const ON_REAL_NODE = {
  nodeSelector: { [REAL_NODE_LABEL.key]: REAL_NODE_LABEL.value },
  tolerations: [
    { key: REAL_NODE_TAINT.key, operator: 'Exists' as const, effect: REAL_NODE_TAINT.effect },
  ],
};
export const PAUSE_IMAGE = 'mcp-operator-test/pause:3.10';
/** containerd's namespace for everything the kubelet runs. */
const CRI_NAMESPACE = 'k8s.io';
const STARTUP_TIMEOUT_MS = 120_000;
const KUBELET_RESTARTS = 2;
const CLUSTER_DOMAIN = 'cluster.local';

export interface RealNodeOptions {
  binaries: Binaries;
  /** A working directory of its own; removed on stop. */
  dir: string;
  log: Log;
}

/** What the node needs from the control plane to join it. */
export interface JoinOptions {
  pki: Pki;
  /** The API server as pods and the node reach it. */
  server: string;
  /** Admin kubeconfig, for the harness's own setup calls. */
  adminKubeconfig: string;
}

/** Where state that outlives a run lives: containerd's image store, and the machine-wide lock. */
function nodeCacheDir(): string {
  return join(cacheRoot(), 'node');
}

function loadedFile(): string {
  return join(nodeCacheDir(), 'loaded-images.json');
}

async function readLoaded(): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(loadedFile(), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

function lockFile(): string {
  return join(nodeCacheDir(), 'lock.json');
}

interface LockOwner {
  pid: number;
  dir: string;
}

export class RealNode {
  readonly #options: RealNodeOptions;
  readonly #processes: ManagedProcess[] = [];
  readonly containerdSocket: string;
  readonly #unregisterCleanUp: () => void;
  #join: JoinOptions | undefined;

  private constructor(options: RealNodeOptions) {
    this.#options = options;
    this.containerdSocket = join(options.dir, 'containerd.sock');
    this.#unregisterCleanUp = cleanUpOnExit(() => cleanUpMachine(options.dir, options.binaries));
  }

  /**
   * Takes the machine's node lock (waiting for another run to finish), cleans up after a run that
   * died holding it, and sets up the network. Must run before the API server starts: it listens
   * on the bridge's address.
   */
  static async prepare(options: RealNodeOptions): Promise<RealNode> {
    await acquireLock(options.dir, options.binaries, options.log);
    const node = new RealNode(options);
    await execFileAsync('iptables', ['-w', '-N', FORWARD_CHAIN]).catch(() => undefined);
    await setUpNodeNetwork();
    await installForwardRules();
    return node;
  }

  /** Starts the node's components and resolves once the node is Ready; stops them on failure. */
  async join(cluster: JoinOptions): Promise<void> {
    this.#join = cluster;
    try {
      await this.#boot();
    } catch (error) {
      const logs = join(cacheRoot(), 'cluster-logs', 'last-failure-node');
      await rm(logs, { recursive: true, force: true });
      await cp(join(this.#options.dir, 'logs'), logs, { recursive: true }).catch(() => undefined);
      await this.stop().catch(() => undefined);
      throw new Error(`${(error as Error).message}\nReal node logs: ${logs}`, { cause: error });
    }
  }

  #requireJoin(): JoinOptions {
    if (this.#join === undefined) throw new Error('the real node has not joined a control plane');
    return this.#join;
  }

  processes(): readonly ManagedProcess[] {
    return this.#processes;
  }

  async #boot(): Promise<void> {
    const { dir, log } = this.#options;
    const started = Date.now();
    await mkdir(join(dir, 'logs'), { recursive: true });
    const ports = await freePorts([
      'kubelet',
      'kubeletHealthz',
      'proxyHealthz',
      'proxyMetrics',
      'dnsReady',
      'dnsHealth',
    ]);
    const [kubeletKubeconfig, proxyKubeconfig] = await Promise.all([
      this.#componentKubeconfig('kubelet', `/O=system:nodes/CN=system:node:${REAL_NODE_NAME}`),
      this.#componentKubeconfig('kube-proxy', '/CN=system:kube-proxy'),
    ]);

    await this.#startContainerd();
    await this.#ensurePauseImage();
    await this.#startCoreDns(ports.dnsReady, ports.dnsHealth);
    await this.#startKubeletUntilReady(kubeletKubeconfig, ports.kubelet, ports.kubeletHealthz);
    // kube-proxy reads its node's addresses at start, so it comes once the kubelet registered it.
    await this.#startKubeProxy(proxyKubeconfig, ports.proxyHealthz, ports.proxyMetrics);
    log(`real node ${REAL_NODE_NAME} Ready after ${((Date.now() - started) / 1000).toFixed(1)}s`);
  }

  #start(name: string, command: string, args: string[]): ManagedProcess {
    const process = startProcess({
      name,
      command,
      args,
      logFile: join(this.#options.dir, 'logs', `${name}.log`),
    });
    this.#processes.push(process);
    return process;
  }

  #checkAlive = (): void => {
    const dead = this.#processes.find((process) => process.exit !== undefined);
    if (dead) {
      throw new Error(
        `${dead.name} exited during startup (code ${dead.exit?.code}, signal ${dead.exit?.signal}); log: ${dead.logFile}`,
      );
    }
  };

  async #componentKubeconfig(name: string, subject: string): Promise<string> {
    const { cert, key } = await issueClientCertificate(this.#requireJoin().pki, name, subject);
    const path = join(this.#options.dir, `${name}.kubeconfig`);
    await writeFile(
      path,
      dump({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'test',
            cluster: {
              server: this.#requireJoin().server,
              'certificate-authority': this.#requireJoin().pki.caCert,
            },
          },
        ],
        users: [{ name, user: { 'client-certificate': cert, 'client-key': key } }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: name } }],
        'current-context': 'test',
      }),
      { mode: 0o600 },
    );
    return path;
  }

  async #startContainerd(): Promise<void> {
    const { dir } = this.#options;
    const root = join(nodeCacheDir(), 'containerd');
    await mkdir(root, { recursive: true });
    await mkdir(join(dir, 'cni'), { recursive: true });
    await writeFile(join(dir, 'cni', '10-mcp-operator.conflist'), JSON.stringify(cniConfig(dir)));
    const config = join(dir, 'containerd.toml');
    await writeFile(config, containerdConfig({ root, dir, socket: this.containerdSocket }));
    this.#start('containerd', 'containerd', ['--config', config]);
    await waitFor(
      'containerd',
      async () => ((await this.ctr('version').catch(() => '')) ? true : undefined),
      {
        timeoutMs: STARTUP_TIMEOUT_MS,
        abort: this.#checkAlive,
      },
    );
  }

  /** Runs `ctr` against this node's containerd, in the kubelet's namespace. */
  ctr(...args: string[]): Promise<string> {
    return ctr(this.containerdSocket, ...args);
  }

  /**
   * The image is made and copied through Docker, which this starts when none runs (a fresh
   * machine's `cluster up`: nothing else has started it) and stops again if it did.
   */
  async #ensurePauseImage(): Promise<void> {
    if ((await heldImages(this.containerdSocket)).has(normaliseReference(PAUSE_IMAGE))) return;
    const engine = await ensureDocker({ log: this.#options.log });
    try {
      await buildPauseImage(this.#options.dir);
      await loadImages(this.containerdSocket, [PAUSE_IMAGE], this.#options.log);
    } finally {
      await engine.stop();
    }
  }

  async #startCoreDns(readyPort: number, healthPort: number): Promise<void> {
    const corefile = join(this.#options.dir, 'Corefile');
    // Only the cluster's own names: a pod must not resolve, let alone reach, anything outside.
    await writeFile(
      corefile,
      [
        `.:53 {`,
        `  bind ${NODE_NETWORK.gateway}`,
        `  errors`,
        `  health 127.0.0.1:${healthPort}`,
        `  ready 127.0.0.1:${readyPort}`,
        `  kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {`,
        `    kubeconfig ${this.#requireJoin().adminKubeconfig}`,
        `    pods insecure`,
        `  }`,
        `  cache 5`,
        `}`,
        '',
      ].join('\n'),
    );
    this.#start('coredns', this.#options.binaries.coredns, ['-conf', corefile]);
    await waitFor(
      'CoreDNS ready',
      async () => {
        const reply = await fetch(`http://127.0.0.1:${readyPort}/ready`).catch(() => undefined);
        return reply?.ok ? true : undefined;
      },
      { timeoutMs: STARTUP_TIMEOUT_MS, abort: this.#checkAlive },
    );
    await this.#publishDnsService();
  }

  /** `kube-dns`: a ClusterIP Service whose only endpoint is CoreDNS on the host. */
  async #publishDnsService(): Promise<void> {
    const manifest = [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kube-dns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } },
        spec: {
          clusterIP: NODE_NETWORK.dnsServiceIp,
          ports: [
            { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
            { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
          ],
        },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'kube-dns-host',
          namespace: 'kube-system',
          labels: {
            'kubernetes.io/service-name': 'kube-dns',
            'endpointslice.kubernetes.io/managed-by': 'mcp-operator-test-harness',
          },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: [NODE_NETWORK.gateway], conditions: { ready: true } }],
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, protocol: 'TCP' },
        ],
      },
    ];
    await this.#kubectlApply(manifest);
  }

  async #kubectlApply(objects: object[]): Promise<void> {
    await runWithInput(
      this.#options.binaries.kubectl,
      ['--kubeconfig', this.#requireJoin().adminKubeconfig, 'apply', '--server-side', '-f', '-'],
      objects.map((object) => JSON.stringify(object)).join('\n'),
    );
  }

  async #startKubeProxy(
    kubeconfig: string,
    healthPort: number,
    metricsPort: number,
  ): Promise<void> {
    const config = join(this.#options.dir, 'kube-proxy.yaml');
    await writeFile(
      config,
      dump({
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        mode: 'iptables',
        clientConnection: { kubeconfig },
        hostnameOverride: REAL_NODE_NAME,
        clusterCIDR: NODE_NETWORK.podSubnet,
        bindAddress: NODE_NETWORK.gateway,
        // NodePorts only on the node's own address, not on every address of the machine.
        nodePortAddresses: ['primary'],
        healthzBindAddress: `127.0.0.1:${healthPort}`,
        metricsBindAddress: `127.0.0.1:${metricsPort}`,
        // 0: leave the machine's conntrack table size alone (kube-proxy would need to raise it).
        conntrack: { maxPerCore: 0, min: 0 },
      }),
    );
    this.#start('kube-proxy', this.#options.binaries['kube-proxy'], [`--config=${config}`]);
    await waitFor(
      'kube-proxy healthy',
      async () => {
        const reply = await fetch(`http://127.0.0.1:${healthPort}/healthz`).catch(() => undefined);
        return reply?.ok ? true : undefined;
      },
      { timeoutMs: STARTUP_TIMEOUT_MS, abort: this.#checkAlive },
    );
  }

  /**
   * The kubelet of the pinned release can die at start on a data race of its own (`fatal error:
   * concurrent map iteration and map write` in the container manager's capacity, while the node
   * is first registered). A node's service manager restarts it; so does this, a bounded number of
   * times, and only when the kubelet is what died.
   */
  async #startKubeletUntilReady(
    kubeconfig: string,
    port: number,
    healthPort: number,
  ): Promise<void> {
    for (let restarts = 0; ; restarts++) {
      const kubelet = await this.#startKubelet(kubeconfig, port, healthPort);
      try {
        await this.#waitNodeReady();
        return;
      } catch (error) {
        const othersAlive = this.#processes.every((p) => p === kubelet || p.exit === undefined);
        if (kubelet.exit === undefined || !othersAlive || restarts === KUBELET_RESTARTS)
          throw error;
        this.#options.log(
          `kubelet exited during startup (code ${kubelet.exit.code}, signal ${kubelet.exit.signal}); restarting it`,
        );
        this.#processes.splice(this.#processes.indexOf(kubelet), 1);
      }
    }
  }

  async #startKubelet(
    kubeconfig: string,
    port: number,
    healthPort: number,
  ): Promise<ManagedProcess> {
    const { dir } = this.#options;
    const { pki } = this.#requireJoin();
    const config = join(dir, 'kubelet.yaml');
    await writeFile(
      config,
      dump({
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        address: NODE_NETWORK.gateway,
        port,
        readOnlyPort: 0,
        healthzBindAddress: '127.0.0.1',
        healthzPort: healthPort,
        authentication: {
          anonymous: { enabled: false },
          webhook: { enabled: true },
          x509: { clientCAFile: pki.caCert },
        },
        authorization: { mode: 'Webhook' },
        containerRuntimeEndpoint: `unix://${this.containerdSocket}`,
        cgroupDriver: 'cgroupfs',
        failCgroupV1: false,
        failSwapOn: false,
        clusterDNS: [NODE_NETWORK.dnsServiceIp],
        clusterDomain: CLUSTER_DOMAIN,
        registerWithTaints: [REAL_NODE_TAINT],
        // Disk and memory are shared with the rest of the machine: evict only when nearly out.
        evictionHard: {
          'memory.available': '100Mi',
          'nodefs.available': '1%',
          'imagefs.available': '1%',
        },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        // Status and pod changes reach the API sooner than the defaults, which suit big clusters.
        nodeStatusUpdateFrequency: '5s',
        syncFrequency: '10s',
        fileCheckFrequency: '5s',
        serializeImagePulls: false,
        resolvConf: '/etc/resolv.conf',
      }),
    );
    return this.#start('kubelet', this.#options.binaries.kubelet, [
      `--config=${config}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${join(dir, 'kubelet')}`,
      `--hostname-override=${REAL_NODE_NAME}`,
      `--node-ip=${NODE_NETWORK.gateway}`,
      `--node-labels=${REAL_NODE_LABEL.key}=${REAL_NODE_LABEL.value}`,
      '--v=1',
    ]);
  }

  async #waitNodeReady(): Promise<void> {
    await waitFor(
      `node ${REAL_NODE_NAME} Ready`,
      async () => {
        const { stdout } = await execFileAsync(this.#options.binaries.kubectl, [
          '--kubeconfig',
          this.#requireJoin().adminKubeconfig,
          'get',
          'node',
          REAL_NODE_NAME,
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
        ]);
        return stdout.trim() === 'True' ? true : undefined;
      },
      { timeoutMs: STARTUP_TIMEOUT_MS, intervalMs: 500, abort: this.#checkAlive },
    );
  }

  /**
   * Stops every pod the kubelet runs (through the API, so the CNI plugin releases their network),
   * then the components, then removes what the node put on the machine.
   */
  async stop(): Promise<void> {
    const kubelet = this.#processes.find((p) => p.name === 'kubelet' && p.exit === undefined);
    if (kubelet) await this.#evictPods().catch(() => undefined);
    for (const process of [...this.#processes].reverse()) {
      if (process.name === 'containerd') await this.#killTasks().catch(() => undefined);
      await stopProcess(process);
    }
    cleanUpMachine(this.#options.dir, this.#options.binaries);
    this.#unregisterCleanUp();
  }

  async #evictPods(): Promise<void> {
    const kubectl = this.#options.binaries.kubectl;
    const base = ['--kubeconfig', this.#requireJoin().adminKubeconfig];
    await execFileAsync(kubectl, [
      ...base,
      'delete',
      'pods',
      '--all-namespaces',
      '--field-selector',
      `spec.nodeName=${REAL_NODE_NAME}`,
      '--grace-period=1',
      '--wait=false',
    ]);
    await waitFor(
      'the real node to stop its pods',
      async () => ((await this.ctr('tasks', 'list', '--quiet')).trim() === '' ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 500 },
    ).catch(() => undefined);
  }

  /** Whatever the kubelet did not stop in time: containers must not outlive the node. */
  async #killTasks(): Promise<void> {
    const tasks = (await this.ctr('tasks', 'list', '--quiet')).split('\n').filter(Boolean);
    for (const task of tasks) {
      await this.ctr('tasks', 'kill', '--signal', 'SIGKILL', task).catch(() => undefined);
      await this.ctr('tasks', 'delete', '--force', task).catch(() => undefined);
    }
  }
}

async function ctr(socket: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(
    'ctr',
    ['--address', socket, '--namespace', CRI_NAMESPACE, ...args],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
}

/** The image references a node's containerd holds for the kubelet. */
async function heldImages(socket: string): Promise<Set<string>> {
  const out = await ctr(socket, 'images', 'list', '--quiet');
  return new Set(out.split('\n').filter((line) => line !== ''));
}

/**
 * Copies images from the local Docker engine into the node whose containerd listens on `socket`,
 * as `kind load docker-image` does. An image already loaded with the same Docker image ID is
 * skipped: containerd's store outlives the run, and a record beside it says which ID each name
 * was loaded from.
 */
export async function loadImages(
  socket: string,
  references: readonly string[],
  log: Log,
): Promise<void> {
  const record = await readLoaded();
  const held = await heldImages(socket);
  for (const reference of references) {
    const name = normaliseReference(reference);
    const id = (await docker(['image', 'inspect', '--format', '{{.Id}}', reference])).trim();
    if (held.has(name) && record[name] === id) continue;
    const started = Date.now();
    await pipe(
      [DOCKER_CLI, ['save', reference]],
      ['ctr', ['--address', socket, '--namespace', CRI_NAMESPACE, 'images', 'import', '-']],
    );
    log(`loaded ${reference} into the real node in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    record[name] = id;
    await writeFile(loadedFile(), JSON.stringify(record, null, 2));
  }
}

const FORWARD_CHAIN = 'MCPOP-NODE-FORWARD';

/**
 * Pod traffic may stay on the bridge (pod to pod, also through a Service's DNAT) but may not be
 * forwarded anywhere else: pods reach the host (API server, DNS) and each other, never the
 * machine's network. Also lets bridge traffic past a FORWARD policy of DROP, which dockerd sets.
 */
async function installForwardRules(): Promise<void> {
  const iptables = (...args: string[]): Promise<unknown> =>
    execFileAsync('iptables', ['-w', ...args]);
  await iptables('-F', FORWARD_CHAIN);
  await iptables('-A', FORWARD_CHAIN, '-o', NODE_NETWORK.bridge, '-j', 'ACCEPT');
  await iptables('-A', FORWARD_CHAIN, '-j', 'REJECT', '--reject-with', 'icmp-net-unreachable');
  const jump = ['FORWARD', '-i', NODE_NETWORK.bridge, '-j', FORWARD_CHAIN];
  const present = await iptables('-C', ...jump).then(
    () => true,
    () => false,
  );
  if (!present) await iptables('-I', ...jump);
}

/**
 * Removes what a node leaves on the machine once its processes are gone: containers that outlived
 * their shim, the shims, kube-proxy's iptables chains, our forward rules, the pods' network
 * namespaces, the bridge and the lock. Synchronous, because it also runs when the harness is
 * interrupted; safe to run twice, and after a run that was killed outright.
 */
function cleanUpMachine(dir: string, binaries: Binaries): void {
  killKubepods();
  killShims(dir);
  const quiet = { stdio: 'ignore' } as const;
  spawnSync(binaries['kube-proxy'], ['--cleanup'], quiet);
  removeKubernetesChains();
  for (const name of readdirOrEmpty('/var/run/netns')) {
    if (name.startsWith('cni-')) spawnSync('ip', ['netns', 'delete', name], quiet);
  }
  tearDownNodeNetwork();
  unmountUnder(dir);
  rmSync(dir, { recursive: true, force: true });
  if (readLock()?.dir === dir) rmSync(lockFile(), { force: true });
}

/**
 * The kubelet's and kube-proxy's chains (`KUBE-*`, which `kube-proxy --cleanup` does not all
 * remove) and ours, with the jumps to them: the lock makes every such chain on the machine ours.
 */
function removeKubernetesChains(): void {
  const ours = (chain: string): boolean => chain.startsWith('KUBE-') || chain === FORWARD_CHAIN;
  for (const table of ['filter', 'nat', 'mangle']) {
    const iptables = (...args: string[]) =>
      spawnSync('iptables', ['-w', '-t', table, ...args], { encoding: 'utf8' });
    const rules = iptables('-S').stdout.split('\n');
    const chains = rules.flatMap((rule) => /^-N (\S+)$/.exec(rule)?.[1] ?? []).filter(ours);
    for (const rule of rules) {
      const jump = /^-A (\S+) (.*-j (\S+).*)$/.exec(rule);
      if (jump && !ours(jump[1]!) && ours(jump[3]!))
        iptables('-D', jump[1]!, ...splitRule(jump[2]!));
    }
    for (const chain of chains) iptables('-F', chain);
    for (const chain of chains) iptables('-X', chain);
  }
}

/** Splits the arguments of an `iptables -S` rule, keeping quoted comments whole. */
function splitRule(rule: string): string[] {
  return [...rule.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');
}

/** Volumes and container root filesystems the kubelet and containerd mounted below `dir`. */
function unmountUnder(dir: string): void {
  const mountPoints = readFileOr('/proc/self/mountinfo', '')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === dir || point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const point of mountPoints) spawnSync('umount', ['-l', point], { stdio: 'ignore' });
}

function readdirOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Every process left in the kubelet's pod cgroups (a shim killed with its parent leaves its container). */
function killKubepods(dir = '/sys/fs/cgroup/pids/kubepods'): void {
  const procs = readFileOr(join(dir, 'cgroup.procs'), '');
  for (const pid of procs.split('\n').filter(Boolean)) killPid(Number(pid));
  for (const entry of readdirOrEmpty(dir)) {
    if (statSyncOrUndefined(join(dir, entry))?.isDirectory()) killKubepods(join(dir, entry));
  }
}

/** containerd's shims are daemons of their own; those of our containerd name its socket, in `dir`. */
function killShims(dir: string): void {
  for (const entry of readdirOrEmpty('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = readFileOr(`/proc/${entry}/cmdline`, '');
    if (cmdline.includes('containerd-shim') && cmdline.includes(dir)) killPid(Number(entry));
  }
}

function readFileOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

function statSyncOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Cleans up after a real node whose run died holding the machine's node lock (SIGKILL, a crash):
 * its containers, mounts, network and iptables chains. Does nothing while the holder lives.
 */
export function cleanUpAbandonedNode(binaries: Binaries, log: Log): void {
  const owner = readLock();
  if (owner === undefined || isAlive(owner.pid)) return;
  log(`cleaning up after a real node whose run died (pid ${owner.pid})`);
  cleanUpMachine(owner.dir, binaries);
  rmSync(lockFile(), { force: true });
}

async function acquireLock(dir: string, binaries: Binaries, log: Log): Promise<void> {
  await mkdir(nodeCacheDir(), { recursive: true });
  let waiting = false;
  for (;;) {
    cleanUpAbandonedNode(binaries, log);
    const owner = readLock();
    if (owner === undefined) {
      await writeFile(lockFile(), JSON.stringify({ pid: process.pid, dir } satisfies LockOwner), {
        flag: 'wx',
      }).catch(() => undefined);
      if (readLock()?.pid === process.pid) return;
    } else if (!waiting) {
      waiting = true;
      log(`another test run (pid ${owner.pid}) has the real node; waiting for it to finish`);
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function readLock(): LockOwner | undefined {
  try {
    return JSON.parse(readFileSync(lockFile(), 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

function cniConfig(dir: string): object {
  return {
    cniVersion: '1.0.0',
    name: 'mcp-operator-node',
    plugins: [
      {
        type: 'bridge',
        bridge: NODE_NETWORK.bridge,
        isGateway: true,
        // Pods never leave the machine (installForwardRules), so there is nothing to masquerade.
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: NODE_NETWORK.podSubnet, gateway: NODE_NETWORK.gateway }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: join(dir, 'cni-ipam'),
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
}

function containerdConfig({
  root,
  dir,
  socket,
}: {
  root: string;
  dir: string;
  socket: string;
}): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return [
    'version = 2',
    `root = ${JSON.stringify(root)}`,
    `state = ${JSON.stringify(join(dir, 'containerd-state'))}`,
    '[grpc]',
    `  address = ${JSON.stringify(socket)}`,
    '[ttrpc]',
    `  address = ${JSON.stringify(`${socket}.ttrpc`)}`,
    '[debug]',
    `  address = ""`,
    '[metrics]',
    `  address = ""`,
    `[${cri}]`,
    `  sandbox_image = ${JSON.stringify(PAUSE_IMAGE)}`,
    // The machine lacks CAP_SYS_RESOURCE: without this every sandbox fails writing oom_score_adj.
    '  restrict_oom_score_adj = true',
    '  enable_unprivileged_ports = true',
    `[${cri}.containerd]`,
    '  snapshotter = "overlayfs"',
    '  default_runtime_name = "runc"',
    `[${cri}.containerd.runtimes.runc]`,
    '  runtime_type = "io.containerd.runc.v2"',
    `[${cri}.containerd.runtimes.runc.options]`,
    '  SystemdCgroup = false',
    `  Root = ${JSON.stringify(join(dir, 'runc'))}`,
    `[${cri}.cni]`,
    '  bin_dir = "/usr/lib/cni"',
    `  conf_dir = ${JSON.stringify(join(dir, 'cni'))}`,
    '',
  ].join('\n');
}

/** `name:tag` as containerd stores it: `docker.io/library/name:tag` or `docker.io/org/name:tag`. */
export function normaliseReference(reference: string): string {
  const firstPart = reference.split('/')[0] ?? '';
  const hasRegistry = reference.includes('/') && /[.:]|^localhost$/.test(firstPart);
  if (hasRegistry) return reference;
  return reference.includes('/') ? `docker.io/${reference}` : `docker.io/library/${reference}`;
}

/** Kubernetes' pause program (from the pinned module), compiled statically and imported into Docker. */
async function buildPauseImage(dir: string): Promise<void> {
  const { stdout } = await execFileAsync(
    'go',
    ['list', '-mod=readonly', '-m', '-f', '{{.Dir}}', 'k8s.io/kubernetes'],
    { cwd: join(import.meta.dirname, 'go', 'kubernetes'), env: { ...process.env, GOWORK: 'off' } },
  );
  const source = join(stdout.trim(), 'build', 'pause', 'linux', 'pause.c');
  const context = join(dir, 'pause-image');
  await mkdir(context, { recursive: true });
  await execFileAsync('gcc', [
    '-Os',
    '-static',
    '-DVERSION=v3.10-mcp-operator-test',
    '-o',
    join(context, 'pause'),
    source,
  ]);
  await execFileAsync('tar', ['-C', context, '-cf', join(dir, 'pause.tar'), 'pause']);
  await docker([
    'import',
    '--change',
    'ENTRYPOINT ["/pause"]',
    '--change',
    'USER 65535:65535',
    join(dir, 'pause.tar'),
    PAUSE_IMAGE,
  ]);
}

/** `from | to`, failing with the stderr of whichever side failed. */
async function pipe(from: [string, string[]], to: [string, string[]]): Promise<void> {
  const source = spawn(from[0], from[1], { stdio: ['ignore', 'pipe', 'pipe'] });
  const sink = spawn(to[0], to[1], { stdio: ['pipe', 'ignore', 'pipe'] });
  source.stdout.pipe(sink.stdin);
  const errors = [collect(source.stderr), collect(sink.stderr)];
  const [a, b] = await Promise.all([exitCode(source), exitCode(sink)]);
  if (a !== 0 || b !== 0) {
    const [sourceError, sinkError] = await Promise.all(errors);
    throw new Error(
      `${from[0]} ${from[1].join(' ')} | ${to[0]} failed: ${sourceError}${sinkError}`,
    );
  }
}
