/**
 * Vitest global setup for the `cluster` project: one control plane for the whole run, with a
 * real node beside the fake ones, and the images its pods run loaded into that node. Tests get
 * the kubeconfig path through `inject('kubeconfig')` (or `testing.ts`), child processes through
 * `KUBECONFIG`, helm through `inject('helm')`, the image names through `inject('images')` and the
 * node's containerd socket through `inject('containerdSocket')`. kubectl comes first on PATH,
 * built from the same Kubernetes module as the control plane.
 *
 * With MCP_OPERATOR_TEST_KUBECONFIG set, the tests use that cluster instead and nothing is
 * started (helm and kubectl are still built: they run locally).
 */
import { dirname } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureBinaries } from './build.ts';
import { ControlPlane } from './control-plane.ts';
import { everyImage } from './deploy.ts';
import { loadImages } from './node.ts';
import { ensureDocker } from '../images/docker.ts';
import { ensureImages, type Images } from '../images/images.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    helm: string;
    images: Images;
    containerdSocket: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.MCP_OPERATOR_TEST_KUBECONFIG;
  const binaries = await ensureBinaries(external ? ['helm', 'kubectl'] : undefined);
  project.provide('helm', binaries.helm);
  process.env.PATH = `${dirname(binaries.kubectl)}:${process.env.PATH ?? ''}`;
  if (external) {
    provideKubeconfig(project, external);
    return () => Promise.resolve();
  }
  const docker = await ensureDocker();
  const images = await ensureImages();
  project.provide('images', images);
  const plane = await ControlPlane.start({ binaries, realNode: true });
  provideKubeconfig(project, plane.kubeconfigPath);
  const socket = plane.containerdSocket!;
  project.provide('containerdSocket', socket);
  await loadImages(socket, everyImage(images), (line) =>
    process.stderr.write(`[cluster] ${line}\n`),
  );
  return async () => {
    await plane.stop();
    await docker.stop();
  };
}

function provideKubeconfig(project: TestProject, path: string): void {
  project.provide('kubeconfig', path);
  process.env.KUBECONFIG = path;
}
