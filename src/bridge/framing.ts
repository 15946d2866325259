/**
 * Newline-delimited JSON-RPC, the stdio framing of MCP (2025-11-25 basic/transports "stdio":
 * messages are delimited by newlines and MUST NOT contain embedded newlines; they MUST be
 * UTF-8). Pure byte handling, no I/O: the transports feed it chunks.
 *
 * A child that breaks the rules costs only the line concerned: a line that is too large, not
 * UTF-8, not JSON, nested deeper than MAX_NESTING_DEPTH (untrusted.ts) or not JSON-RPC is
 * reported through `onBadLine` and skipped, and decoding goes on with the next line.
 */

import { classify, type JsonRpcMessage, type RequestId } from '../mcp/jsonrpc.ts';
import { readAs } from './message-text.ts';
import { nestsDeeperThan } from '../mcp/untrusted.ts';

export type BadLineReason = 'too-large' | 'invalid-utf8' | 'not-json' | 'too-deep' | 'not-json-rpc';

export interface BadLine {
  reason: BadLineReason;
  /** Size of the whole line in bytes. */
  bytes: number;
  /**
   * The line as text (lossy), or its first and last bytes when it is too large. Only for
   * attributing the line to a request (`salvageIds`); never logged, it may hold anything.
   */
  sample: string;
}

export interface DecoderHandlers {
  onMessage: (message: JsonRpcMessage) => void;
  onBadLine: (line: BadLine) => void;
}

const SAMPLE_BYTES = 512;
const NEWLINE = 0x0a;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const lossy = new TextDecoder('utf-8');

export class JsonRpcLineDecoder {
  readonly #maxLineBytes: number;
  readonly #handlers: DecoderHandlers;
  /** The parts of the line being read; emptied, not replaced, at its end (once per line). */
  readonly #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Set while skipping the rest of a line that outgrew the limit. */
  #oversize: { head: Buffer; tail: Buffer; bytes: number } | undefined;

  constructor(maxLineBytes: number, handlers: DecoderHandlers) {
    this.#maxLineBytes = maxLineBytes;
    this.#handlers = handlers;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      this.#take(chunk.subarray(start, nl));
      this.#endLine();
      start = nl + 1;
    }
    if (start < chunk.length) this.#take(chunk.subarray(start));
  }

  /** End of stream: a last line without its newline is still a line (it cannot be completed). */
  end(): void {
    if (this.#pendingBytes > 0 || this.#oversize) this.#endLine();
  }

  #take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#oversize) {
      this.#oversize.bytes += part.length;
      this.#oversize.tail = lastBytes(Buffer.concat([this.#oversize.tail, part]));
      return;
    }
    if (this.#pendingBytes + part.length <= this.#maxLineBytes) {
      this.#pending.push(part);
      this.#pendingBytes += part.length;
      return;
    }
    // Over the limit: keep only a head and a tail, so a runaway line cannot exhaust memory.
    const all = Buffer.concat([...this.#pending, part]);
    this.#oversize = {
      head: all.subarray(0, SAMPLE_BYTES),
      tail: lastBytes(all),
      bytes: all.length,
    };
    this.#pending.length = 0;
    this.#pendingBytes = 0;
  }

  #endLine(): void {
    const oversize = this.#oversize;
    if (oversize) {
      this.#oversize = undefined;
      const sample = `${lossy.decode(oversize.head)}…${lossy.decode(oversize.tail)}`;
      this.#handlers.onBadLine({ reason: 'too-large', bytes: oversize.bytes, sample });
      return;
    }
    const bytes = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending);
    this.#pending.length = 0;
    this.#pendingBytes = 0;
    this.#decode(bytes);
  }

  #decode(bytes: Buffer): void {
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      this.#bad('invalid-utf8', bytes.length, lossy.decode(bytes));
      return;
    }
    // Tolerate CRLF line ends and blank lines: neither carries a message.
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.#bad('not-json', bytes.length, text);
      return;
    }
    if (nestsDeeperThan(bytes)) {
      this.#bad('too-deep', bytes.length, text);
      return;
    }
    const kind = classify(value);
    if (kind === undefined) {
      this.#bad('not-json-rpc', bytes.length, text);
      return;
    }
    if (kind === 'response') readAs(value as JsonRpcMessage, text);
    this.#handlers.onMessage(value as JsonRpcMessage);
  }

  #bad(reason: BadLineReason, bytes: number, sample: string): void {
    this.#handlers.onBadLine({ reason, bytes, sample });
  }
}

function lastBytes(buffer: Buffer): Buffer {
  return buffer.length <= SAMPLE_BYTES ? buffer : buffer.subarray(buffer.length - SAMPLE_BYTES);
}

/** One message as a line for the child's stdin. JSON.stringify escapes every newline. */
export function encodeLine(message: JsonRpcMessage): string {
  return `${JSON.stringify(message)}\n`;
}

const ID_MEMBER = /"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")/g;

/**
 * Every `"id": <value>` in a bad line's sample: candidates for the request it answered. The
 * caller keeps those that match a request in flight; which serializer wrote the line decides
 * whether the id comes first or last, so both the head and the tail of a long line are kept.
 */
export function salvageIds(sample: string): RequestId[] {
  const ids: RequestId[] = [];
  for (const match of sample.matchAll(ID_MEMBER)) {
    try {
      ids.push(JSON.parse(match[1]!) as RequestId);
    } catch {
      // an id cut off by the sample boundary; the other candidates may still match
    }
  }
  return ids;
}
