/**
 * A real Kubernetes control plane as local processes: etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, and kwok, which plays the kubelet for a few fake
 * nodes so that scheduled pods become Running and Ready. With `realNode`, a real node joins it
 * too (node.ts), where pods really run.
 *
 * Everything lives in one working directory (certificates, etcd data, logs, the admin
 * kubeconfig); `stop()` ends every process and removes it. See processes.ts for how the
 * processes are kept from outliving the harness when it crashes.
 */
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { dump } from 'js-yaml';
import {
  cacheRoot,
  kwokStagesDir,
  stderrLog,
  type BinaryName,
  type Binaries,
  type Log,
} from './build.ts';
import { NODE_NETWORK } from './network.ts';
import { RealNode } from './node.ts';
import { createPki, type Pki } from './pki.ts';
import { get, type Tls } from './probe.ts';
import { freePorts } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';
import {
  forgetDirectory,
  isAlive,
  removeOnExit,
  startProcess,
  stopProcess,
  type ManagedProcess,
} from './processes.ts';

export interface ControlPlaneOptions {
  binaries: Binaries;
  /** Working directory, created and later removed. Default: a new directory under the OS temp dir. */
  dir?: string;
  /** How many fake nodes kwok runs. */
  nodes?: number;
  /** Also start a real node (needs root; one per machine at a time). */
  realNode?: boolean;
  /**
   * Serve Go's /debug/pprof on kube-apiserver and kube-controller-manager (off by default, as
   * profiling is a debugging surface a cluster should not expose): bench/control-plane-profile.ts.
   */
  profiling?: boolean;
  log?: Log;
}

/** Where a component serves Go's /debug/pprof, and the TLS to reach it with. */
export interface ProfileTarget {
  name: BinaryName;
  /** Base URL, without /debug/pprof. */
  url: string;
  tls: Tls;
}

export interface Component {
  name: string;
  pid: number;
  ports: number[];
  logFile: string;
}

/** Prefix of default working directories; a directory whose owner died is removed on the next start. */
export const DIR_PREFIX = 'mcp-operator-cluster-';
const SERVICE_CIDR = '10.96.0.0/16';
/** The first address of SERVICE_CIDR, which the `kubernetes` Service gets. */
const SERVICE_IP = '10.96.0.1';
/** kwok manages the nodes that carry this annotation (and no others). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
const STARTUP_TIMEOUT_MS = 90_000;

interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
  scheduler: number;
}

export class ControlPlane {
  readonly dir: string;
  readonly kubeconfigPath: string;
  readonly #options: ControlPlaneOptions;
  readonly #ports: Ports;
  readonly #processes: { process: ManagedProcess; ports: number[] }[] = [];
  #node: RealNode | undefined;
  #adminTls: Tls = {};
  #stopping = false;

  private constructor(options: ControlPlaneOptions, dir: string, ports: Ports) {
    this.#options = options;
    this.dir = dir;
    this.kubeconfigPath = join(dir, 'kubeconfig');
    this.#ports = ports;
  }

  /**
   * With a real node the API server listens on the node bridge's host address, which pods reach
   * (through the `kubernetes` Service or directly) and the host reaches as its own address.
   */
  get #host(): string {
    return this.#options.realNode ? NODE_NETWORK.gateway : '127.0.0.1';
  }

  get server(): string {
    return `https://${this.#host}:${this.#ports.apiserver}`;
  }

  /** The real node's containerd socket (images are loaded there), when there is a real node. */
  get containerdSocket(): string | undefined {
    return this.#node?.containerdSocket;
  }

  /** Starts every component and resolves once the API is ready and the fake nodes are Ready. */
  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    await removeAbandonedDirs();
    const dir = options.dir ?? (await mkdtemp(join(tmpdir(), DIR_PREFIX)));
    await mkdir(join(dir, 'logs'), { recursive: true });
    removeOnExit(dir);
    await writeFile(join(dir, 'owner.pid'), String(process.pid));
    const ports = await freePorts([
      'etcdClient',
      'etcdPeer',
      'apiserver',
      'controllerManager',
      'scheduler',
    ]);
    const plane = new ControlPlane(options, dir, ports);
    try {
      await plane.#boot();
    } catch (error) {
      const tails = await Promise.all(
        plane.#processes
          .filter(({ process }) => process.exit)
          .map(({ process }) => tail(process.logFile)),
      );
      const logs = await plane.#saveLogs();
      await plane.#halt();
      const message = [(error as Error).message, ...tails, `All component logs: ${logs}`];
      throw new Error(message.join('\n'), { cause: error });
    }
    return plane;
  }

  components(): Component[] {
    const node = (this.#node?.processes() ?? []).map((process) => ({ process, ports: [] }));
    return [...this.#processes, ...node].map(toComponent);
  }

  /**
   * The components serving /debug/pprof (with `profiling`): the API server to the admin client
   * certificate, the controller manager to anyone on loopback (see #componentArgs).
   */
  profileTargets(): ProfileTarget[] {
    if (!this.#options.profiling) return [];
    return [
      { name: 'kube-apiserver', url: this.server, tls: this.#adminTls },
      {
        name: 'kube-controller-manager',
        url: `https://127.0.0.1:${this.#ports.controllerManager}`,
        tls: 'insecure',
      },
    ];
  }

  /** Resolves with the first component to exit (on its own, or because of `stop()`). */
  async whenAnyExits(): Promise<Component> {
    return toComponent(
      await Promise.race(
        this.#processes.map(async (entry) => {
          await entry.process.exited;
          return entry;
        }),
      ),
    );
  }

  /**
   * Stops every process and removes the working directory. A component that died on its own
   * while the control plane ran is reported, and its logs are kept.
   */
  async stop(): Promise<void> {
    const died = this.#processes.filter(({ process }) => process.exit !== undefined);
    if (died.length > 0) {
      const logs = await this.#saveLogs();
      this.#log(
        `${died.map(({ process }) => process.name).join(', ')} exited while running; logs: ${logs}`,
      );
    }
    await this.#halt();
  }

  /** Stops the processes in reverse start order and removes the working directory. */
  async #halt(): Promise<void> {
    this.#stopping = true;
    await this.#node?.stop();
    for (const { process } of [...this.#processes].reverse()) await stopProcess(process);
    await rm(this.dir, { recursive: true, force: true });
    forgetDirectory(this.dir);
  }

  async #boot(): Promise<void> {
    const started = Date.now();
    if (this.#options.realNode) {
      this.#node = await RealNode.prepare({
        binaries: this.#options.binaries,
        dir: join(this.dir, 'node'),
        log: this.#log,
      });
    }
    const pki = await createPki(
      this.dir,
      SERVICE_IP,
      this.#options.realNode ? [NODE_NETWORK.gateway] : [],
    );
    const adminTls = await readAdminTls(pki);
    this.#adminTls = adminTls;
    await writeFile(this.kubeconfigPath, await this.#kubeconfig(pki), { mode: 0o600 });

    const etcd = this.#start(
      'etcd',
      [this.#ports.etcdClient, this.#ports.etcdPeer],
      this.#etcdArgs(),
    );
    await this.#waitHealthy(etcd, `http://127.0.0.1:${this.#ports.etcdClient}/health`, {});
    const apiserver = this.#start(
      'kube-apiserver',
      [this.#ports.apiserver],
      [
        ...this.#apiserverArgs(pki),
        ...(this.#options.realNode ? this.#realNodeApiserverArgs(pki) : []),
      ],
    );
    await this.#waitHealthy(apiserver, `${this.server}/readyz`, adminTls);
    this.#log(`kube-apiserver ready after ${elapsed(started)}`);

    const controllerManager = this.#start(
      'kube-controller-manager',
      [this.#ports.controllerManager],
      this.#controllerManagerArgs(pki),
    );
    const scheduler = this.#start('kube-scheduler', [this.#ports.scheduler], this.#schedulerArgs());
    await this.#startKwok();
    await Promise.all([
      this.#waitHealthy(
        controllerManager,
        `https://127.0.0.1:${this.#ports.controllerManager}/healthz`,
        'insecure',
      ),
      this.#waitHealthy(
        scheduler,
        `https://127.0.0.1:${this.#ports.scheduler}/healthz`,
        'insecure',
      ),
      this.#createNodes(),
    ]);
    await this.#node?.join({ pki, server: this.server, adminKubeconfig: this.kubeconfigPath });
    this.#log(`control plane ready after ${elapsed(started)}: KUBECONFIG=${this.kubeconfigPath}`);
  }

  #start(
    name: BinaryName,
    ports: number[],
    args: string[],
    env?: NodeJS.ProcessEnv,
  ): ManagedProcess {
    const process = startProcess({
      name,
      command: this.#options.binaries[name],
      args,
      logFile: join(this.dir, 'logs', `${name}.log`),
      ...(env && { env }),
    });
    this.#processes.push({ process, ports });
    return process;
  }

  /** Fails at once, with the end of its log, if any component has exited. */
  #checkAlive = (): void => {
    const dead = this.#processes.find(({ process }) => process.exit !== undefined);
    if (dead === undefined || this.#stopping) return;
    const { process } = dead;
    throw new Error(
      `${process.name} exited during startup (code ${process.exit?.code}, signal ${process.exit?.signal})`,
    );
  };

  async #waitHealthy(process: ManagedProcess, url: string, tls: Tls): Promise<void> {
    try {
      await waitFor(
        `${process.name} health (${url})`,
        async () => {
          const reply = await get(url, tls);
          if (reply.status === 200) return true;
          throw new Error(`HTTP ${reply.status} ${reply.body.slice(0, 300)}`);
        },
        { timeoutMs: STARTUP_TIMEOUT_MS, abort: this.#checkAlive },
      );
    } catch (error) {
      // A process that died is reported by start(); one that hangs is reported here.
      if (process.exit) throw error;
      throw new Error(`${(error as Error).message}\n${await tail(process.logFile)}`, {
        cause: error,
      });
    }
  }

  async #kubeconfig(pki: Pki): Promise<string> {
    const [ca, cert, key] = await Promise.all(
      [pki.caCert, pki.adminCert, pki.adminKey].map(async (file) =>
        (await readFile(file)).toString('base64'),
      ),
    );
    return dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'mcp-operator-test',
          cluster: { server: this.server, 'certificate-authority-data': ca },
        },
      ],
      users: [{ name: 'admin', user: { 'client-certificate-data': cert, 'client-key-data': key } }],
      contexts: [
        { name: 'mcp-operator-test', context: { cluster: 'mcp-operator-test', user: 'admin' } },
      ],
      'current-context': 'mcp-operator-test',
    });
  }

  #etcdArgs(): string[] {
    const client = `http://127.0.0.1:${this.#ports.etcdClient}`;
    const peer = `http://127.0.0.1:${this.#ports.etcdPeer}`;
    return [
      '--name=etcd',
      `--data-dir=${join(this.dir, 'etcd')}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=etcd=${peer}`,
      // The data is thrown away after the run; durability only costs time.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ];
  }

  #apiserverArgs(pki: Pki): string[] {
    return [
      `--etcd-servers=http://127.0.0.1:${this.#ports.etcdClient}`,
      `--bind-address=${this.#host}`,
      `--secure-port=${this.#ports.apiserver}`,
      // Published in the `kubernetes` Endpoints, which reject loopback. Without a real node no pod
      // runs to use it, so an address from a documentation range (RFC 5737) says plainly that it
      // goes nowhere.
      `--advertise-address=${this.#options.realNode ? NODE_NETWORK.gateway : '198.51.100.1'}`,
      `--cert-dir=${join(this.dir, 'apiserver-certs')}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--authorization-mode=Node,RBAC',
      // On top of the default plugins: owner references with blockOwnerDeletion then need update
      // on the owner's finalizers, as on OpenShift, so the chart's finalizers rule is tested.
      '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
      '--allow-privileged=true',
      `--profiling=${this.#profiling}`,
    ];
  }

  /** How the API server reaches the real node's kubelet, for logs and exec. */
  #realNodeApiserverArgs(pki: Pki): string[] {
    return [
      // The node's name resolves nowhere; its InternalIP is the bridge's address.
      '--kubelet-preferred-address-types=InternalIP',
      `--kubelet-client-certificate=${pki.adminCert}`,
      `--kubelet-client-key=${pki.adminKey}`,
    ];
  }

  /**
   * Flags the controller manager and scheduler share: talk to the API as admin, serve /healthz.
   * Without --authentication-kubeconfig they authenticate no one on their own port, which is all
   * the harness needs there (no front proxy is configured for them to trust).
   */
  #componentArgs(port: number, profiling = false): string[] {
    return [
      `--kubeconfig=${this.kubeconfigPath}`,
      `--authorization-always-allow-paths=/healthz,/readyz,/livez${profiling ? ',/debug/pprof/*' : ''}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${join(this.dir, 'component-certs', String(port))}`,
      // One instance each: waiting for a lease only slows the start.
      '--leader-elect=false',
      `--profiling=${profiling}`,
    ];
  }

  get #profiling(): boolean {
    return this.#options.profiling ?? false;
  }

  #controllerManagerArgs(pki: Pki): string[] {
    return [
      ...this.#componentArgs(this.#ports.controllerManager, this.#profiling),
      '--controllers=*',
      `--root-ca-file=${pki.caCert}`,
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      `--cluster-signing-cert-file=${pki.caCert}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      // Pick up new objects without client-side throttling; the tests create many quickly.
      '--kube-api-qps=1000',
      '--kube-api-burst=1000',
    ];
  }

  #schedulerArgs(): string[] {
    return [
      ...this.#componentArgs(this.#ports.scheduler),
      '--kube-api-qps=1000',
      '--kube-api-burst=1000',
    ];
  }

  async #startKwok(): Promise<void> {
    const stagesDir = kwokStagesDir(this.#options.binaries.kwok);
    const stages = await Promise.all(
      (await readdir(stagesDir)).sort().map((file) => readFile(join(stagesDir, file), 'utf8')),
    );
    const config = join(this.dir, 'kwok.yaml');
    await writeFile(config, stages.join('\n---\n'));
    this.#start(
      'kwok',
      [],
      [
        `--kubeconfig=${this.kubeconfigPath}`,
        `--config=${config}`,
        '--manage-all-nodes=false',
        `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
        // kwok renews each node's Lease, so the node lifecycle controller sees them alive.
        '--node-lease-duration-seconds=40',
        '--cidr=10.244.0.0/16',
      ],
      // kwok also reads ~/.kwok/kwok.yaml when it exists; a private HOME keeps a user's out.
      { ...process.env, HOME: this.dir },
    );
  }

  async #createNodes(): Promise<void> {
    const kc = new KubeConfig();
    kc.loadFromFile(this.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const names = Array.from({ length: this.#options.nodes ?? 2 }, (_, i) => `kwok-node-${i}`);
    await Promise.all(names.map((name) => core.createNode({ body: fakeNode(name) })));
    await waitFor(
      `fake nodes ${names.join(', ')} Ready (kwok)`,
      async () => {
        const nodes = await core.listNode();
        return nodes.items.filter(isReady).length === names.length ? true : undefined;
      },
      { timeoutMs: STARTUP_TIMEOUT_MS, intervalMs: 200, abort: this.#checkAlive },
    );
  }

  /** Copies the component logs where they outlive the working directory; returns that path. */
  async #saveLogs(): Promise<string> {
    const target = join(cacheRoot(), 'cluster-logs', 'last-failure');
    await rm(target, { recursive: true, force: true });
    await cp(join(this.dir, 'logs'), target, { recursive: true });
    return target;
  }

  #log = (line: string): void => {
    (this.#options.log ?? stderrLog)(line);
  };
}

async function readAdminTls(pki: Pki): Promise<Tls> {
  const [ca, cert, key] = await Promise.all(
    [pki.caCert, pki.adminCert, pki.adminKey].map((file) => readFile(file)),
  );
  return { ca, cert, key };
}

function toComponent({ process, ports }: { process: ManagedProcess; ports: number[] }): Component {
  return { name: process.name, pid: process.pid, ports, logFile: process.logFile };
}

function fakeNode(name: string): V1Node {
  return {
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
    },
  };
}

function isReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

async function tail(file: string, lines = 30): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return `--- last lines of ${basename(file)} ---\n${text.trimEnd().split('\n').slice(-lines).join('\n')}`;
}

function elapsed(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)}s`;
}

/** Removes default working directories left by a harness that was killed (its components died with it). */
async function removeAbandonedDirs(): Promise<void> {
  for (const entry of await readdir(tmpdir())) {
    if (!entry.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), entry);
    const owner = Number(await readFile(join(dir, 'owner.pid'), 'utf8').catch(() => 'NaN'));
    if (Number.isInteger(owner) && !isAlive(owner)) await rm(dir, { recursive: true, force: true });
  }
}
