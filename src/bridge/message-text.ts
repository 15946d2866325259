/**
 * The JSON text of a message, when the bridge already holds it. A child's answer is parsed (to
 * check it and find its request) but passed on unchanged except for its id, so its line is
 * kept and only the id is spliced in, instead of serialising the whole result again: for a
 * large tool result, serialising is most of what the bridge does with it.
 *
 * Keyed by the message object, and only as long as it lives; a message without a known text
 * (built by the bridge, or changed after it was read) is serialised as before.
 */

import type { JsonRpcMessage, RequestId } from '../mcp/jsonrpc.ts';

const texts = new WeakMap<JsonRpcMessage, string>();

/** What the child wrote, for `passedOn`: a response line, checked and parsed into `message`. */
export function readAs(message: JsonRpcMessage, line: string): void {
  texts.set(message, line);
}

/**
 * Records the text of `copy`, which is `original` (read from a child, id `childId`) with the
 * id `id` and nothing else changed. Only for the prefix every SDK writes, `{"jsonrpc":"2.0",
 * "id":<childId>,`: any other layout is serialised instead, as is a line with a carriage
 * return, which would split an SSE event (a JSON text may hold one as whitespace).
 */
export function passedOn(
  original: JsonRpcMessage,
  childId: number,
  copy: JsonRpcMessage,
  id: RequestId,
): void {
  const line = texts.get(original);
  if (line === undefined) return;
  const prefix = `{"jsonrpc":"2.0","id":${childId},`;
  if (!line.startsWith(prefix) || line.includes('\r')) return;
  texts.set(copy, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},${line.slice(prefix.length)}`);
}

/** The message as JSON: the text it was passed on with, or serialised now. */
export function jsonText(message: JsonRpcMessage): string {
  return texts.get(message) ?? JSON.stringify(message);
}
