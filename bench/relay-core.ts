/**
 * What every relay floor does whatever its HTTP front (bench/relay-floor*.ts): one child per
 * session, the body passed on as a line, the child's line passed back as the answer. Not a
 * bridge: it trusts its one client, the bench, and checks nothing.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';

/** How a front sends an answer: no body for 202, 204 and 405; JSON for 200. */
export type Reply = (status: 200 | 202 | 204 | 405, session?: string, json?: string) => void;

class Relay {
  readonly id = randomUUID();
  readonly #child: ChildProcess;
  /** Answers still owed, oldest first: a stdio server answers one session's requests in order. */
  readonly #waiting: Reply[] = [];
  #partial = '';

  constructor(command: string, args: string[]) {
    this.#child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.#child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (this.#partial + chunk).split('\n');
      this.#partial = lines.pop()!;
      for (const line of lines) this.#waiting.shift()?.(200, this.id, line);
    });
  }

  send(body: string, reply: Reply | undefined): void {
    if (reply) this.#waiting.push(reply);
    this.#child.stdin!.write(`${body}\n`);
  }

  close(): void {
    this.#child.stdin!.end();
  }
}

/** The sessions of one relay process, each with its child running `command`. */
export class Relays {
  readonly #relays = new Map<string, Relay>();
  readonly #command: string;
  readonly #args: string[];

  constructor([command, ...args]: string[]) {
    this.#command = command!;
    this.#args = args;
  }

  /** One HTTP request, its method as sent (upper case), its body decoded. */
  handle(method: string, session: string | undefined, body: string, reply: Reply): void {
    if (method === 'DELETE') {
      if (session !== undefined) this.#relays.get(session)?.close();
      if (session !== undefined) this.#relays.delete(session);
      return reply(204);
    }
    if (method !== 'POST') return reply(405);
    const message = JSON.parse(body) as { id?: unknown };
    let relay = session === undefined ? undefined : this.#relays.get(session);
    if (!relay) {
      relay = new Relay(this.#command, this.#args);
      this.#relays.set(relay.id, relay);
    }
    const isRequest = message.id !== undefined;
    relay.send(body, isRequest ? reply : undefined);
    if (!isRequest) reply(202, relay.id);
  }

  close(): void {
    for (const relay of this.#relays.values()) relay.close();
  }
}
