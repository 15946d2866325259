/**
 * Vitest global setup for the `cluster` project: one control plane for the whole run. Tests get
 * its kubeconfig path through `inject('kubeconfig')` (or `testing.ts`), child processes through
 * `KUBECONFIG`, and helm through `inject('helm')`.
 *
 * With MCP_OPERATOR_TEST_KUBECONFIG set, the tests use that cluster instead and nothing is
 * started (helm is still built: it runs locally).
 */
import type { TestProject } from 'vitest/node';
import { ensureBinaries } from './build.ts';
import { ControlPlane } from './control-plane.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    helm: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.MCP_OPERATOR_TEST_KUBECONFIG;
  const binaries = await ensureBinaries(external ? ['helm'] : undefined);
  project.provide('helm', binaries.helm);
  if (external) {
    provideKubeconfig(project, external);
    return () => Promise.resolve();
  }
  const plane = await ControlPlane.start({ binaries });
  provideKubeconfig(project, plane.kubeconfigPath);
  return () => plane.stop();
}

function provideKubeconfig(project: TestProject, path: string): void {
  project.provide('kubeconfig', path);
  process.env.KUBECONFIG = path;
}
