/**
 * One test run's use of the private Docker engine in the directory given as its argument, as a
 * process of its own (test/images/engine.machine.test.ts):
 * prints `started` or `joined` once the engine answers, then on a line of stdin `stop` calls
 * `stop()` and exits, or on `exit` exits without it (an interrupted run: the exit handler leaves).
 */
import { createInterface } from 'node:readline';
import { ensureDocker } from './docker.ts';

const [home] = process.argv.slice(2);
const engine = await ensureDocker({ home });
process.stdout.write(`${engine.startedHere ? 'started' : 'joined'}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'stop') await engine.stop();
  if (line === 'stop' || line === 'exit') process.exit(0);
}
