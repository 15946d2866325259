/**
 * What the chart gives the operator's container besides its flags, so that the benches run the
 * operator as a user's pod does: the environment it sets and the Node flags of its command
 * (`helm template` with the default values, read from the rendered Deployment). Variables from
 * the Downward API are the harness's own (test/support/operator.ts).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { Helm, only } from '../test/charts/helm.ts';

export interface ChartOperator {
  /** Environment variables with a literal value. */
  env: Record<string, string>;
  /** Node's flags, between `node` and the entry point of the container's command. */
  nodeFlags: string[];
}

let rendered: Promise<ChartOperator> | undefined;

/** The operator container as the chart renders it with its default values. */
export function chartOperator(): Promise<ChartOperator> {
  rendered ??= (async () => {
    const helm = await Helm.create();
    try {
      const deployment = only(await helm.template(), 'Deployment') as unknown as V1Deployment;
      const container = deployment.spec?.template.spec?.containers[0];
      const command = container?.command ?? [];
      if (command.length > 0 && command[0] !== 'node') {
        throw new Error(`the chart's operator command ${command.join(' ')}: expected node`);
      }
      return {
        env: Object.fromEntries(
          (container?.env ?? []).flatMap(({ name, value }) =>
            value === undefined ? [] : [[name, value]],
          ),
        ),
        nodeFlags: command.slice(1, -1),
      };
    } finally {
      await helm.close();
    }
  })();
  return rendered;
}

/**
 * How the operator runs, for a bench's header: the chart's environment (with a bench's
 * overrides) and every Node flag.
 */
export function describeChartOperator(
  chart: ChartOperator,
  extraNodeFlags: string[],
  envOverrides: Record<string, string> = {},
): string {
  const env = Object.entries({ ...chart.env, ...envOverrides }).map(
    ([name, value]) => `${name}=${value}`,
  );
  const flags = [...chart.nodeFlags, ...extraNodeFlags];
  return `the chart's environment: ${env.join(' ') || 'none'}; Node flags: ${flags.join(' ') || 'none'}`;
}
