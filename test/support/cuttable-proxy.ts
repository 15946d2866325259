/**
 * A TCP proxy to the API server whose connections a test can break, as a network fault or an
 * API server that drops its watches would: the client sees its streams end with ECONNRESET.
 */
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';

export class CuttableProxy {
  readonly #sockets = new Set<Socket>();
  readonly #server: Server;
  #refusing = false;

  constructor(target: URL) {
    this.#server = createServer((client) => {
      if (this.#refusing) return client.destroy();
      const upstream = tcpConnect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve) =>
      this.#server.listen(0, '127.0.0.1', () => {
        const address = this.#server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      }),
    );
  }

  /** Breaks every open connection, as a network fault would. */
  cut(): void {
    for (const s of this.#sockets) s.destroy();
  }

  refuse(refusing: boolean): void {
    this.#refusing = refusing;
    if (refusing) this.cut();
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
