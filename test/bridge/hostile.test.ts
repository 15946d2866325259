/**
 * Requests and child output meant to take the bridge down, each reproduced against a real
 * bridge process or a bridge in this process: each must cost only its own request.
 */

import { describe, expect, it } from 'vitest';
import { SERVERS } from './harness.ts';
import { startBridgeProcess } from './process.ts';
import { rawExchange, statusOf } from '../support/raw-http.ts';

/** Request targets that node:http accepts and the WHATWG URL parser refuses. */
export const MALFORMED_TARGETS = ['http://[/', '//[::1/mcp', 'http://[::1/healthz'];

describe('a malformed request target', () => {
  it('is answered 400, and the bridge serves the next request', async () => {
    const bridge = await startBridgeProcess([], SERVERS.misbehaving(), { ready: false });
    for (const target of MALFORMED_TARGETS) {
      const raw = await rawExchange(
        bridge.port,
        `GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
      );
      expect(statusOf(raw), `GET ${target}`).toBe(400);
    }
    expect((await fetch(`${bridge.base}/healthz`)).status).toBe(200);
    expect(bridge.exit).toBeUndefined();
  });
});
