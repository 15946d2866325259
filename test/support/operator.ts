/**
 * The real operator (`node src/cli.ts controller`) as a local process: the one way tests and
 * benches run it outside a pod. It gets what the chart's pod would get, minus the container: a
 * kubeconfig file, the Downward API's POD_NAME and POD_NAMESPACE, and a metrics address on a
 * free loopback port. Its pino JSON log goes to a file read line by line. Every process started
 * here dies with the test process (test/cluster/processes.ts) and `stopAllOperators` stops the
 * ones still running.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  killProcess,
  startProcess,
  stopProcess,
  type Exit,
  type ManagedProcess,
} from '../cluster/processes.ts';
import { CLI } from './cli.ts';
import { waitFor } from './wait.ts';

export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export interface OperatorOptions {
  /** Names the log and kubeconfig files, and the POD_NAME the process sees. */
  name: string;
  /** Flags after `controller`; a later flag wins over an earlier one. */
  args: readonly string[];
  /** The kubeconfig's path, or its YAML (written to a 0600 file beside the log). */
  kubeconfig: { path: string } | { yaml: string };
  /** The namespace the process believes it runs in (POD_NAMESPACE). */
  namespace?: string;
  /** Where the log goes; a fresh temporary directory when absent. */
  dir?: string;
  /** The entry point to run: src/cli.ts by default; benches run the build (dist/cli.js). */
  cli?: string;
  /** Node's own flags, before the entry point. */
  nodeArgs?: readonly string[];
  /** A command that runs the rest of the command line: a bench's cgroup, say. */
  launcher?: readonly string[];
  /** Environment beyond the pod's Downward API variables: what the chart sets, say. */
  env?: Readonly<Record<string, string>>;
}

const running = new Set<OperatorProcess>();

export class OperatorProcess {
  readonly #process: ManagedProcess;

  private constructor(process: ManagedProcess) {
    this.#process = process;
  }

  static async start(o: OperatorOptions): Promise<OperatorProcess> {
    const dir = o.dir ?? (await mkdtemp(join(tmpdir(), 'mcp-operator-process-')));
    const kubeconfig =
      'path' in o.kubeconfig ? o.kubeconfig.path : join(dir, `${o.name}.kubeconfig`);
    if ('yaml' in o.kubeconfig) await writeFile(kubeconfig, o.kubeconfig.yaml, { mode: 0o600 });
    const managed = startProcess({
      name: o.name,
      command: o.launcher?.[0] ?? process.execPath,
      args: [
        ...(o.launcher === undefined ? [] : [...o.launcher.slice(1), process.execPath]),
        ...(o.nodeArgs ?? []),
        o.cli ?? CLI,
        'controller',
        ...o.args,
        '--metrics-address=127.0.0.1:0',
        `--kubeconfig=${kubeconfig}`,
      ],
      logFile: join(dir, `${o.name}.log`),
      env: {
        PATH: process.env.PATH,
        POD_NAME: `${o.name}-pod`,
        POD_NAMESPACE: o.namespace ?? 'mcp-system',
        ...o.env,
      },
    });
    const operator = new OperatorProcess(managed);
    running.add(operator);
    void managed.exited.then(() => running.delete(operator));
    return operator;
  }

  get pid(): number {
    return this.#process.pid;
  }

  get logFile(): string {
    return this.#process.logFile;
  }

  /** Set once the process has exited. */
  get exit(): Exit | undefined {
    return this.#process.exit;
  }

  get exited(): Promise<Exit> {
    return this.#process.exited;
  }

  async lines(): Promise<LogLine[]> {
    const text = await readFile(this.#process.logFile, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  }

  /** Waits for a log line that `match` accepts. */
  waitForLog(what: string, match: (line: LogLine) => boolean, timeoutMs = 30_000) {
    const found = async () => (await this.lines()).find(match);
    return this.during(waitFor(`operator log: ${what}`, found, { timeoutMs }));
  }

  /**
   * `work`, failing at once if the operator exits before it settles; a failure carries the end
   * of the operator's log.
   */
  async during<T>(work: Promise<T>): Promise<T> {
    const exited = this.#process.exited.then((exit) => {
      throw new Error(`the operator exited (${JSON.stringify(exit)})`);
    });
    exited.catch(() => undefined);
    try {
      return await Promise.race([work, exited]);
    } catch (err) {
      const text = await readFile(this.#process.logFile, 'utf8').catch(() => '');
      const tail = text.split('\n').slice(-20).join('\n');
      throw new Error(`${(err as Error).message}\nlast operator log lines:\n${tail}`, {
        cause: err,
      });
    }
  }

  /** The metrics server's URL (`http://127.0.0.1:<port>`), once it listens. */
  async url(): Promise<string> {
    const started = await this.waitForLog('started', (l) => l.msg === 'controller started');
    return started.metrics as string;
  }

  /** Resolves with the metrics URL once /readyz answers 200: caches synced, leading if elected. */
  async ready(timeoutMs = 60_000): Promise<string> {
    const url = await this.url();
    const isReady = async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok === true;
    await this.during(waitFor('the operator to be ready', isReady, { timeoutMs }));
    return url;
  }

  /** Whether this operator holds the lease, from its /metrics. */
  async isLeader(): Promise<boolean> {
    const text = await (await fetch(`${await this.url()}/metrics`)).text();
    return /^mcp_operator_leader 1$/m.test(text);
  }

  /** SIGTERM, as the kubelet sends; resolves once it has exited. */
  async stop(): Promise<void> {
    await stopProcess(this.#process, 10_000);
  }

  /** SIGKILL, as an OOM kill or a node failure would; resolves once it has exited. */
  async kill(): Promise<void> {
    await killProcess(this.#process);
  }
}

/** Stops every operator process still running (for afterEach/afterAll). */
export async function stopAllOperators(): Promise<void> {
  await Promise.all([...running].map((operator) => operator.stop()));
}
