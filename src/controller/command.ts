/**
 * `mcp-operator controller`: runs the controller until SIGTERM or SIGINT, then stops
 * gracefully (in-flight reconciles finish, the Lease is released, sockets close).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { OperatorError, operatorError } from '../errors.ts';
import { controllerUsage, parseControllerConfig, type ControllerConfig } from './config.ts';
import { Manager } from './manager.ts';

export function loadKubeConfig(config: Pick<ControllerConfig, 'kubeconfig'>): KubeConfig {
  const kc = new KubeConfig();
  if (config.kubeconfig === undefined) kc.loadFromDefault();
  else kc.loadFromFile(config.kubeconfig);
  return kc;
}

/** Parses flags, or prints usage / the error and returns the exit code. */
export function configOrExit(
  command: string,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ControllerConfig | number {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(controllerUsage(command));
    return 0;
  }
  try {
    return parseControllerConfig(argv, env);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`mcp-operator ${command}: ${message}\n\n${controllerUsage(command)}`);
    return 2;
  }
}

/** Runs a manager until a signal stops it; resolves to the exit code. */
export async function runManager(
  config: ControllerConfig,
  kubeConfig: KubeConfig,
  log: Logger,
): Promise<number> {
  const manager = await Manager.start({ config, kubeConfig, log });
  log.info(
    { server: kubeConfig.getCurrentCluster()?.server, metrics: manager.url },
    'controller started',
  );
  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, 'shutting down');
    void manager.stop();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const end = await manager.done;
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  if (end === 'lost') {
    const { namespace, name } = config.leaderElection;
    log.error(operatorError('MCPOP_LEADERSHIP_LOST', `${namespace}/${name}`).message);
    return 1;
  }
  log.info('stopped');
  return 0;
}

export async function controllerCommand(argv: string[]): Promise<number> {
  const config = configOrExit('controller', argv, process.env);
  if (typeof config === 'number') return config;
  const log = pino({ level: config.logLevel });
  try {
    return await runManager(config, loadKubeConfig(config), log);
  } catch (err) {
    log.error(
      { err, code: err instanceof OperatorError ? err.code : undefined },
      'controller failed',
    );
    return 1;
  }
}
