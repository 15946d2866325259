/**
 * One JSON-RPC exchange over Streamable HTTP, bounded in time and bytes. The protocol layer
 * (client.ts) decides what an answer means; this module only moves bytes and guarantees that
 * a server which hangs, streams forever or sends too much ends as a coded error, quickly and
 * without the whole answer ever being held in memory.
 *
 * Streamable HTTP (MCP 2025-11-25 §Transports "Sending Messages"; 2026-07-28
 * basic/transports/streamable-http "Sending Messages"): every message is its own POST; a
 * request is answered with `application/json` (one object) or `text/event-stream` (SSE events,
 * the last one carrying the response); a notification with `202 Accepted`.
 */

import { createParser } from 'eventsource-parser';
import { type Dispatcher, fetch } from 'undici';
import { DISCOVERY_TOKEN_HEADER } from '../mcp/metadata.ts';
import { OperatorError, operatorError } from '../errors.ts';
import { EgressRefusal } from './egress.ts';
import { shown } from '../tools/text.ts';

/** Limits and identity of one discovery run; every exchange of the run draws on the same budget. */
export interface Channel {
  readonly url: string;
  /** The URL as error messages show it: no user info, no query (either may carry a secret). */
  readonly displayUrl: string;
  readonly token: string | undefined;
  /** Sent in DISCOVERY_TOKEN_HEADER: our bridge then lists every tool (never logged). */
  readonly discoveryToken: string | undefined;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** Fires when the time budget is spent. */
  readonly deadline: AbortSignal;
  /** Fires when the caller gives up (server removed, operator stopping). */
  readonly cancel: AbortSignal | undefined;
  /** Either of the two above: what every fetch and body read listens to. */
  readonly signal: AbortSignal;
  /** Opens the connections: the operator's egress guard (egress.ts), or undici's default. */
  readonly dispatcher: Dispatcher | undefined;
  bytesRead: number;
  /** Stops the deadline timer; call it when the run is over. */
  close(): void;
}

export interface ChannelOptions {
  url: string;
  token?: string | undefined;
  discoveryToken?: string | undefined;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** A URL as messages show it: without user info, query or fragment, which may hold secrets. */
export function displayUrl(url: URL | string): string {
  const parsed = typeof url === 'string' ? URL.parse(url) : url;
  return parsed === null ? '(an invalid URL)' : `${parsed.origin}${parsed.pathname}`;
}

/**
 * Not AbortSignal.timeout: its timer keeps the signal, and through its listeners every
 * response of the run, alive until it fires; a closed channel lets them go at once.
 */
export function openChannel(options: ChannelOptions): Channel {
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), options.timeoutMs).unref();
  const deadline = timer.signal;
  const cancel = options.signal;
  const parsed = new URL(options.url);
  return {
    url: options.url,
    displayUrl: displayUrl(parsed),
    token: options.token,
    discoveryToken: options.discoveryToken,
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes,
    deadline,
    cancel,
    signal: cancel === undefined ? deadline : AbortSignal.any([deadline, cancel]),
    dispatcher: options.dispatcher,
    bytesRead: 0,
    close: () => clearTimeout(timeout),
  };
}

/** What the server sent back for one POST. */
export interface Answer {
  status: number;
  headers: Headers;
  /**
   * For a JSON answer the parsed body; for an SSE answer the JSON-RPC message that answers the
   * request; for an error status the parsed body if it was JSON. Not yet validated.
   */
  body?: unknown;
  /**
   * What an error body was, for the error message: its media type and size, never its
   * content, which may be anything the URL serves (an internal page, a secret).
   */
  bodyNote?: string;
}

/** An error body is only read for the JSON-RPC error code it may carry; no more than this. */
const ERROR_BODY_LIMIT = 16 * 1024;

/**
 * POST one JSON-RPC message. For a request (`message.id` set) resolves once its response has
 * arrived, cancelling the rest of an SSE stream; for a notification, once the status is known.
 */
export async function post(
  channel: Channel,
  method: string,
  message: { id?: number; [key: string]: unknown },
  headers: Record<string, string>,
): Promise<Answer> {
  const response = await send(channel, method, {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(message),
  });
  const answer: Answer = { status: response.status, headers: response.headers };
  if (!response.ok) return readErrorBody(channel, method, response, answer);
  if (response.body === null || message.id === undefined) {
    void response.body?.cancel().catch(ignore);
    return answer;
  }
  const mediaType = mediaTypeOf(response);
  if (mediaType === 'application/json') {
    answer.body = parseJson(channel, method, await readText(channel, method, response.body));
  } else if (mediaType === 'text/event-stream') {
    answer.body = await readEventStream(channel, method, response.body, message.id);
  } else {
    void response.body.cancel().catch(ignore);
    throw badResponse(channel, method, `unexpected Content-Type '${shown(mediaType, 64)}'`);
  }
  return answer;
}

/** DELETE the session (2025-11-25 §Session Management 5); a courtesy, so failures are ignored. */
export async function deleteSession(
  channel: Channel,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<void> {
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...optional(channel.cancel)]);
  try {
    const response = await fetch(channel.url, {
      method: 'DELETE',
      headers: withAuth(channel, headers),
      redirect: 'manual',
      signal,
      dispatcher: channel.dispatcher,
    });
    await response.body?.cancel();
  } catch {
    // The server may be gone or may not support DELETE (405 is allowed); nothing to report.
  }
}

async function send(
  channel: Channel,
  method: string,
  init: { method: string; headers: Record<string, string>; body: string },
): Promise<Response> {
  try {
    return await fetch(channel.url, {
      ...init,
      headers: withAuth(channel, init.headers),
      // A redirect could carry the bearer token to another host; the user should point
      // discovery at the final URL instead.
      redirect: 'manual',
      signal: channel.signal,
      dispatcher: channel.dispatcher,
    });
  } catch (error) {
    throw transportFailure(channel, method, error, 'cannot reach');
  }
}

/** The run's credentials on top of `headers`: the bearer token and the discovery token. */
function withAuth(channel: Channel, headers: Record<string, string>): Record<string, string> {
  return {
    ...headers,
    ...(channel.token === undefined ? {} : { authorization: `Bearer ${channel.token}` }),
    ...(channel.discoveryToken === undefined
      ? {}
      : { [DISCOVERY_TOKEN_HEADER.toLowerCase()]: channel.discoveryToken }),
  };
}

async function readErrorBody(
  channel: Channel,
  method: string,
  response: Response,
  answer: Answer,
): Promise<Answer> {
  if (response.body === null) return { ...answer, bodyNote: 'no body' };
  let text = '';
  let cut = false;
  const before = channel.bytesRead;
  await readChunks(channel, method, response.body, (chunk) => {
    text += chunk;
    cut = text.length >= ERROR_BODY_LIMIT;
    return cut;
  });
  try {
    answer.body = JSON.parse(text);
  } catch {
    // Not JSON: nothing in it can change what the status means.
  }
  const bytes = channel.bytesRead - before;
  if (bytes === 0) return { ...answer, bodyNote: 'empty body' };
  const type = shown(mediaTypeOf(response), 64);
  const size = `${cut ? 'more than ' : ''}${bytes} bytes`;
  // A JSON-RPC error code is a number the client knows the meaning of; its message is text.
  const code = (answer.body as { error?: { code?: unknown } } | undefined)?.error?.code;
  const rpc = Number.isInteger(code) ? ` with JSON-RPC error ${String(code)}` : '';
  return { ...answer, bodyNote: `${type === '' ? '' : `${type} `}body of ${size}${rpc}` };
}

function mediaTypeOf(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

async function readText(
  channel: Channel,
  method: string,
  body: ReadableStream<Uint8Array>,
): Promise<string> {
  const parts: string[] = [];
  await readChunks(channel, method, body, (chunk) => {
    parts.push(chunk);
    return false;
  });
  return parts.join('');
}

/** JSON.parse's own message quotes the text, which must not reach status: only the size does. */
function parseJson(channel: Channel, method: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const bytes = Buffer.byteLength(text);
    throw badResponse(channel, method, `invalid JSON (a body of ${bytes} bytes, not shown)`);
  }
}

/**
 * Read SSE events until the one that answers request `id`. Other messages on the stream
 * (progress, logging, server requests in 2025-11-25) are skipped; events with empty data are
 * the priming events of 2025-11-25 §Sending Messages 6. A stream that closes first is an error:
 * discovery does not resume streams (2026-07-28 removed resumption altogether).
 */
async function readEventStream(
  channel: Channel,
  method: string,
  body: ReadableStream<Uint8Array>,
  id: number,
): Promise<unknown> {
  let found: unknown;
  let failure: OperatorError | undefined;
  const parser = createParser({
    onEvent(event) {
      if (found !== undefined || failure !== undefined) return;
      if ((event.event ?? 'message') !== 'message' || event.data.trim() === '') return;
      try {
        const message: unknown = JSON.parse(event.data);
        if (answers(message, id)) found = message;
      } catch {
        failure = badResponse(channel, method, 'invalid JSON in an SSE event (not shown)');
      }
    },
  });
  await readChunks(channel, method, body, (chunk) => {
    parser.feed(chunk);
    if (failure !== undefined) throw failure;
    return found !== undefined;
  });
  if (found === undefined) {
    throw badResponse(channel, method, 'the SSE stream ended before the response arrived');
  }
  return found;
}

function answers(message: unknown, id: number): boolean {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { id?: unknown }).id === id &&
    ('result' in message || 'error' in message)
  );
}

/**
 * Feed decoded chunks to `consume` until it returns true or the body ends. Every byte counts
 * against the run's byte budget; the stream is cancelled on the way out, which is what stops
 * a never-ending SSE stream and releases the connection.
 */
async function readChunks(
  channel: Channel,
  method: string,
  body: ReadableStream<Uint8Array>,
  consume: (text: string) => boolean,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read().catch((error: unknown) => {
        throw transportFailure(channel, method, error, 'connection lost while reading from');
      });
      if (done) {
        consume(decoder.decode());
        return;
      }
      channel.bytesRead += value.byteLength;
      if (channel.bytesRead > channel.maxBytes) {
        throw operatorError('MCPOP_DISCOVERY_TOO_LARGE', channel.displayUrl, channel.maxBytes);
      }
      if (consume(decoder.decode(value, { stream: true }))) return;
    }
  } finally {
    void reader.cancel().catch(ignore);
  }
}

/** Name what went wrong with fetch or a body read: our deadline, our caller, or the network. */
function transportFailure(
  channel: Channel,
  method: string,
  error: unknown,
  what: string,
): OperatorError {
  if (error instanceof OperatorError) return error;
  // A refusal of our own connector (egress.ts) reaches us as the cause of fetch's TypeError.
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof EgressRefusal) {
    const { where, range } = cause;
    const { displayUrl: url } = channel;
    return operatorError('MCPOP_DISCOVERY_EGRESS_DENIED', url, where, range.cidr, range.why);
  }
  if (channel.deadline.aborted) {
    return operatorError('MCPOP_DISCOVERY_TIMEOUT', channel.displayUrl, method, channel.timeoutMs);
  }
  if (channel.cancel?.aborted === true) {
    return operatorError('MCPOP_DISCOVERY_CANCELLED', channel.displayUrl);
  }
  // The full URL may hold a secret in its query; messages show only the display form. A TLS
  // error may quote the server's certificate, so the reason is shown like any server text.
  const reason = shown(describe(error).replaceAll(channel.url, channel.displayUrl), 300);
  return what === 'cannot reach'
    ? operatorError('MCPOP_DISCOVERY_UNREACHABLE', channel.displayUrl, reason)
    : badResponse(channel, method, `${what} the server (${reason})`);
}

/** undici reports `fetch failed` and hides the useful part (ECONNREFUSED, …) in `cause`. */
function describe(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

export function badResponse(channel: Channel, method: string, reason: string): OperatorError {
  return operatorError('MCPOP_DISCOVERY_BAD_RESPONSE', channel.displayUrl, method, reason);
}

function optional<T>(value: T | undefined): T[] {
  return value === undefined ? [] : [value];
}

function ignore(): void {}
