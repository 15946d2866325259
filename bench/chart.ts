/**
 * What the chart gives the operator's container besides its flags, so that the benches run the
 * operator as a user's pod does: the environment the chart sets (`helm template` with the
 * default values, read from the rendered Deployment). Variables from the Downward API are
 * the harness's own (test/support/operator.ts).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { Helm, only } from '../test/charts/helm.ts';

let rendered: Promise<Record<string, string>> | undefined;

/** The operator container's environment variables with a literal value, as the chart renders them. */
export function chartOperatorEnv(): Promise<Record<string, string>> {
  rendered ??= (async () => {
    const helm = await Helm.create();
    try {
      const deployment = only(await helm.template(), 'Deployment') as unknown as V1Deployment;
      const env = deployment.spec?.template.spec?.containers[0]?.env ?? [];
      return Object.fromEntries(
        env.flatMap(({ name, value }) => (value === undefined ? [] : [[name, value]])),
      );
    } finally {
      await helm.close();
    }
  })();
  return rendered;
}
