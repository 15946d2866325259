/**
 * Vitest global setup for the `containers` project: a running Docker engine (started for the
 * run if none is) and every image built (cached by content: seconds when nothing changed). Tests
 * get the image names through `inject('images')`. Without a usable engine the setup throws, so
 * the run fails instead of skipping the container tests.
 */
import type { TestProject } from 'vitest/node';
import { ensureDocker } from './docker.ts';
import { ensureImages, type Images } from './images.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    images: Images;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string) => process.stderr.write(`[images] ${line}\n`);
  const docker = await ensureDocker({ log });
  try {
    project.provide('images', await ensureImages(log));
  } catch (error) {
    await docker.stop();
    throw error;
  }
  return () => docker.stop();
}
