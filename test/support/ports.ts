/** Free TCP ports on loopback, for servers a test or bench starts. */
import { createServer } from 'node:net';

/**
 * Ports that are free on 127.0.0.1 right now. All are held open until all are found, so they
 * differ from one another; another process may still take one before a component binds it, in
 * which case that component fails to start and says so in its log.
 */
export async function freePorts<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const servers = await Promise.all(
    names.map(async () => {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      return server;
    }),
  );
  const ports = servers.map((server, i) => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return [names[i], address.port];
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return Object.fromEntries(ports) as Record<K, number>;
}

/** One port that is free on 127.0.0.1 right now (see freePorts). */
export async function freePort(): Promise<number> {
  return (await freePorts(['port'])).port;
}
