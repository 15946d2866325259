/**
 * The reference server `@modelcontextprotocol/server-everything` over Streamable HTTP, as a child
 * process: for tests and benches alike (no test-runner hooks here, so a bench can import it).
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { freePort } from './ports.ts';

const require = createRequire(import.meta.url);

/** The reference server as a child process; resolves once it listens. */
export async function startEverything(): Promise<{
  url: string;
  log(): string;
  close(): Promise<void>;
}> {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const port = await freePort();
  const child = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const append = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('listening on port')) resolve();
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${log}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log: () => log,
    async close() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
