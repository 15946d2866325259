/**
 * Pod mode: children are started by the supervisor (supervisor.sh) in the server container, and
 * reached over FIFOs in the emptyDir both containers mount (src/bridge/pod-contract.ts).
 *
 * Every FIFO is opened with O_NONBLOCK, so an open never parks a libuv thread while the other
 * side is not there yet: `<id>.out` opens for reading at once; `<id>.in` and the control FIFO
 * fail with ENXIO until their reader exists, and are retried. The descriptors are wrapped in
 * net.Socket, which waits for readiness with epoll instead of failing with EAGAIN.
 */

import { randomBytes } from 'node:crypto';
import { constants, open } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { operatorError } from '../../errors.ts';
import { childInFifo, childOutFifo, childPackageFile, CONTROL_FIFO } from '../pod-contract.ts';
import { StreamTransport, type Launcher, type Transport } from '../transport.ts';
import { toPackage, type ResolvedPackage } from '../../resolved-package.ts';
import type { JsonRpcMessage, RequestId } from '../../mcp/jsonrpc.ts';

const { O_RDONLY, O_WRONLY, O_NONBLOCK } = constants;
// A raw descriptor, not a FileHandle: the Socket owns and closes it (a FileHandle would try
// to close it again when collected).
const openFd = promisify(open);

export interface SupervisedOptions {
  /** The emptyDir shared with the supervisor. */
  dir: string;
  maxLineBytes: number;
  /** How long a child may take to appear after `start`, and to exit after its stdin closed. */
  graceMs: number;
  /** Told the package a child's launcher resolved, once the supervisor has read it. */
  onPackage?: (resolved: ResolvedPackage) => void;
}

/** How long the supervisor may take to write `<id>.package` after `resolved <id>`. */
const PACKAGE_WAIT_MS = 10_000;

/** Longer content is no package line (a server container may write anything there). */
const PACKAGE_LINE_MAX = 512;

/**
 * Opens a FIFO without blocking, retrying while its counterpart is missing: ENOENT until the
 * supervisor has created it, ENXIO (write side only) until someone reads it.
 */
async function openFifo(path: string, flags: number, deadline: number): Promise<Socket> {
  for (let delay = 1; ; delay = Math.min(delay * 2, 25)) {
    try {
      const fd = await openFd(path, flags | O_NONBLOCK);
      const readable = (flags & O_WRONLY) === 0;
      return new Socket({ fd, readable, writable: !readable });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENXIO') || Date.now() > deadline) throw error;
    }
    await sleep(delay);
  }
}

/** Writes `start <id>` / `stop <id>` lines; reopens the FIFO after the supervisor restarted. */
class ControlChannel {
  readonly #path: string;
  readonly #timeoutMs: number;
  #socket: Promise<Socket> | undefined;

  constructor(dir: string, timeoutMs: number) {
    this.#path = join(dir, CONTROL_FIFO);
    this.#timeoutMs = timeoutMs;
  }

  async send(line: string): Promise<void> {
    const socket = await this.#open();
    // One short write per line: atomic on a FIFO (< PIPE_BUF), as supervisor.sh relies on.
    await new Promise<void>((resolve, reject) => {
      socket.write(`${line}\n`, (error) => {
        if (!error) return resolve();
        this.#socket = undefined;
        socket.destroy();
        reject(error);
      });
    });
  }

  close(): void {
    void this.#socket?.then((socket) => socket.destroy()).catch(() => undefined);
    this.#socket = undefined;
  }

  #open(): Promise<Socket> {
    this.#socket ??= openFifo(this.#path, O_WRONLY, Date.now() + this.#timeoutMs).then(
      (socket) => {
        socket.on('error', () => {
          this.#socket = undefined;
        });
        return socket;
      },
      (error: unknown) => {
        this.#socket = undefined;
        throw operatorError('MCPOP_SUPERVISOR_UNAVAILABLE', this.#path, String(error));
      },
    );
    return this.#socket;
  }
}

class FifoTransport extends StreamTransport {
  readonly label: string;
  readonly #id: string;
  readonly #control: ControlChannel;
  readonly #graceMs: number;
  readonly #ended: Promise<void>;
  readonly #output: Socket;
  readonly #dir: string;
  readonly #onPackage: SupervisedOptions['onPackage'];
  #answered = false;

  constructor(
    id: string,
    output: Socket,
    input: Socket,
    control: ControlChannel,
    options: SupervisedOptions,
  ) {
    super(output, input, options.maxLineBytes);
    this.label = `fifo ${id}`;
    this.#id = id;
    this.#control = control;
    this.#graceMs = options.graceMs;
    this.#output = output;
    this.#dir = options.dir;
    this.#onPackage = options.onPackage;
    this.#ended = new Promise((resolve) => {
      // End of `<id>.out`: the child closed its stdout, which in practice means it exited.
      output.once('close', () => {
        input.destroy();
        this.closed('exited (its stdout closed)');
        resolve();
      });
    });
  }

  /**
   * The child's first message: its launcher has resolved and started the server, so the
   * supervisor can now tell which package runs.
   */
  protected override received(message: JsonRpcMessage, relatedTo?: RequestId): void {
    if (!this.#answered && this.#onPackage !== undefined) {
      const told = this.#onPackage;
      void this.#control
        .send(`resolved ${this.#id}`)
        .then(() => this.#readPackage())
        .then((resolved) => resolved && told(resolved))
        .catch(() => undefined);
    }
    this.#answered = true;
    super.received(message, relatedTo);
  }

  /** `<id>.package` once the supervisor wrote it; undefined when it names no package. */
  async #readPackage(): Promise<ResolvedPackage | undefined> {
    const path = join(this.#dir, childPackageFile(this.#id));
    const deadline = Date.now() + PACKAGE_WAIT_MS;
    for (
      let delay = 10;
      !this.isClosed && Date.now() < deadline;
      delay = Math.min(delay * 2, 250)
    ) {
      const text = await readHead(path, PACKAGE_LINE_MAX + 1);
      if (text !== undefined) {
        const fields = text.trim().split(' ');
        return text.length > PACKAGE_LINE_MAX || fields.length !== 3
          ? undefined
          : toPackage(...(fields as [string, string, string]));
      }
      await sleep(delay);
    }
    return undefined;
  }

  /**
   * Same order as for a spawned child: close stdin, wait, then ask the supervisor to stop it.
   * The supervisor ends the child's whole process group within its own grace period (by default
   * the same as ours), so waiting twice ours bounds the wait; a process that left the group and
   * still holds `<id>.out` is given up on rather than waited for forever.
   */
  async close(): Promise<void> {
    this.endInput();
    if (await this.#endsWithin(this.#graceMs)) return;
    // Not awaited: a supervisor that does not read its control FIFO must not stall us either.
    void this.#control.send(`stop ${this.#id}`).catch(() => undefined);
    if (await this.#endsWithin(2 * this.#graceMs)) return;
    this.closed('still running after stop (it left its process group); its FIFOs were let go');
    this.#output.destroy();
  }

  async #endsWithin(ms: number): Promise<boolean> {
    const timer = new AbortController();
    const ended = await Promise.race([
      this.#ended.then(() => true),
      sleep(ms, false, { signal: timer.signal }).catch(() => false),
    ]);
    timer.abort();
    return ended;
  }
}

/** The first `bytes` of a file, or undefined while it does not exist. */
async function readHead(path: string, bytes: number): Promise<string | undefined> {
  const file = await openFile(path, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (file === undefined) return undefined;
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(bytes), 0, bytes, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await file.close();
  }
}

export class SupervisedLauncher implements Launcher {
  readonly #options: SupervisedOptions;
  readonly #control: ControlChannel;

  constructor(options: SupervisedOptions) {
    this.#options = options;
    this.#control = new ControlChannel(options.dir, options.graceMs);
  }

  async launch(): Promise<Transport> {
    // The id names files in the shared directory: only characters supervisor.sh accepts.
    const id = `c${randomBytes(9).toString('base64url')}`;
    await this.#control.send(`start ${id}`);
    const deadline = Date.now() + this.#options.graceMs;
    const dir = this.#options.dir;
    try {
      const output = await openFifo(join(dir, childOutFifo(id)), O_RDONLY, deadline);
      const input = await openFifo(join(dir, childInFifo(id)), O_WRONLY, deadline).catch(
        (error: unknown) => {
          output.destroy();
          throw error;
        },
      );
      return new FifoTransport(id, output, input, this.#control, this.#options);
    } catch (error) {
      await this.#control.send(`stop ${id}`).catch(() => undefined);
      throw operatorError('MCPOP_CHILD_START_FAILED', id, String(error));
    }
  }

  close(): Promise<void> {
    this.#control.close();
    return Promise.resolve();
  }
}
