/**
 * Vitest global setup for the `machine` project: every binary its tests start through the
 * cluster CLI is built here, before any test or hook timeout runs: on a fresh machine the cold
 * build takes minutes, and a test that times out meanwhile would report the build, not itself.
 */
import { ensureBinaries } from './build.ts';

export default async function setup(): Promise<void> {
  await ensureBinaries();
}
