/**
 * The real operator (`node src/cli.ts controller`) as a local process, authenticated as a
 * ServiceAccount with a token from the TokenRequest API: what the chart's pod would be, minus the
 * container. Its pino JSON log goes to a file that tests read line by line.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import { startProcess, stopProcess, type ManagedProcess } from '../cluster/processes.ts';
import { waitFor } from '../cluster/testing.ts';
import { CLI } from '../support/cli.ts';

/**
 * A kubeconfig that authenticates with a fresh token of `namespace/serviceAccount` (TokenRequest
 * API), trusting `caData` (base64 PEM) for an https `server`.
 */
export async function serviceAccountKubeconfig(
  admin: KubeConfig,
  o: { namespace: string; serviceAccount: string; server: string; caData: string },
): Promise<string> {
  const request = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: o.serviceAccount,
    namespace: o.namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  // Plain http (the recording proxy on loopback) has no certificate to verify; client-node
  // insists on being told so.
  const tls = o.server.startsWith('https:')
    ? { 'certificate-authority-data': o.caData }
    : { 'insecure-skip-tls-verify': true };
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: o.server, ...tls } }],
    users: [{ name: o.serviceAccount, user: { token: request.status!.token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: o.serviceAccount } }],
    'current-context': 'test',
  });
}

export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export class OperatorProcess {
  readonly #process: ManagedProcess;

  private constructor(process: ManagedProcess) {
    this.#process = process;
  }

  /**
   * Starts the controller with `args` (the chart's, after `controller`) and a kubeconfig; the
   * metrics address moves to a free loopback port (a later flag wins over the chart's).
   */
  static async start(o: {
    dir: string;
    name: string;
    args: readonly string[];
    kubeconfig: string;
    namespace: string;
  }): Promise<OperatorProcess> {
    const kubeconfigFile = join(o.dir, `${o.name}.kubeconfig`);
    await writeFile(kubeconfigFile, o.kubeconfig, { mode: 0o600 });
    const process_ = startProcess({
      name: o.name,
      command: process.execPath,
      args: [
        CLI,
        'controller',
        ...o.args,
        '--metrics-address=127.0.0.1:0',
        `--kubeconfig=${kubeconfigFile}`,
      ],
      logFile: join(o.dir, `${o.name}.log`),
      // What the chart's Downward API env gives the pod.
      env: { PATH: process.env.PATH, POD_NAME: `${o.name}-pod`, POD_NAMESPACE: o.namespace },
    });
    return new OperatorProcess(process_);
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

  /** The metrics server's URL, once it listens. */
  async url(): Promise<string> {
    const started = await this.waitForLog('started', (l) => l.msg === 'controller started');
    return started.metrics as string;
  }

  /** SIGTERM, as the kubelet sends; resolves once it has exited. */
  async stop(): Promise<void> {
    await stopProcess(this.#process, 10_000);
  }

  get exit() {
    return this.#process.exit;
  }
}

/** A log line reporting that the API server refused `verb` on `resource`. */
export const forbidden = (verb: string, resource: string) => (line: LogLine) =>
  JSON.stringify(line).includes(`cannot ${verb} resource \\"${resource}\\"`);
