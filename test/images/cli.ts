/**
 * `npm run images`: builds the project's image, the stand-in base images and the test server
 * images into the local Docker engine (starting dockerd for the duration if none runs), and
 * prints their names.
 */
import { ensureDocker } from './docker.ts';
import { ensureImages } from './images.ts';

const log = (line: string) => process.stderr.write(`[images] ${line}\n`);
const started = Date.now();
const docker = await ensureDocker({ log });
try {
  const images = await ensureImages(log);
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.stdout.write(`${JSON.stringify(images, null, 2)}\n`);
} finally {
  await docker.stop();
}
