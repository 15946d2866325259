/** Placeholder, replaced below. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Bridge } from './bridge.ts';
import type { ModernHandler } from './endpoint.ts';
import type { JsonRpcMessage } from './jsonrpc.ts';

export class ModernEndpoint implements ModernHandler {
  constructor(_options: { bridge: Bridge; logger: Logger }) {}
  claims(_req: IncomingMessage, _message: JsonRpcMessage): boolean {
    return false;
  }
  async handle(
    _req: IncomingMessage,
    _res: ServerResponse,
    _message: JsonRpcMessage,
  ): Promise<void> {}
}
