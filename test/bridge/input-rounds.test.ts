/**
 * Proxy mode with a handshake-era client (the official SDK client, 2025-11-25) in front of a
 * server of 2026-07-28: the Go SDK's everything-server serving HTTP without sessions, which
 * asks for input with InputRequiredResults. The bridge turns each into requests to the client
 * and retries the call with the client's answers, until the server answers.
 */

import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INPUT_ROUNDS } from '../../src/bridge/proxy/era-2026-server.ts';
import { goHttp, type RunningServer } from './conformance.ts';
import { startHostileServer } from './fixtures/hostile-http-server.ts';
import { everythingServer } from './go-server.ts';
import { callError, connect, startTestBridge, textOf } from './harness.ts';
import { within } from '../support/wait.ts';

describe('a handshake-era client in front of a 2026-07-28 server (proxy mode)', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await goHttp(await everythingServer(), { stateless: true });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  async function client() {
    const bridge = await startTestBridge({ upstream: server.url });
    const client = await connect(bridge.url, {
      capabilities: { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
    });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, ({ params }) => {
      asked.push(`elicitation: ${params.message}`);
      const content = /color/.test(params.message) ? { color: 'blue' } : { name: 'Ada' };
      return { action: 'accept', content };
    });
    client.setRequestHandler(CreateMessageRequestSchema, () => {
      asked.push('sampling');
      return { role: 'assistant', content: { type: 'text', text: 'Hello' }, model: 'test' };
    });
    client.setRequestHandler(ListRootsRequestSchema, () => {
      asked.push('roots');
      return { roots: [{ uri: 'file:///work', name: 'work' }] };
    });
    return { client, asked };
  }

  it('answers elicitation, sampling and roots asked for in one round, on the call', async () => {
    const { client: sdk, asked } = await client();
    const result = await sdk.callTool({
      name: 'test_input_required_result_multiple_inputs',
      arguments: {},
    });
    expect(result.isError).toBeFalsy();
    expect(asked.sort()).toEqual(['elicitation: What is your name?', 'roots', 'sampling']);
    expect(JSON.stringify(result.content)).toMatch(/Ada/);
    await sdk.close();
  });

  it('carries the server state through several rounds', async () => {
    const { client: sdk, asked } = await client();
    const result = await sdk.callTool({
      name: 'test_input_required_result_multi_round',
      arguments: {},
    });
    expect(result.isError).toBeFalsy();
    expect(asked).toEqual([
      'elicitation: Step 1: What is your name?',
      'elicitation: Step 2: What is your favorite color?',
    ]);
    expect(textOf(result)).toMatch(/Ada likes blue/);
    await sdk.close();
  });

  it('refuses a call whose server keeps asking for input, after a bounded number of rounds', async () => {
    // The fixture asks forever; the real servers end their rounds.
    const hostile = await startHostileServer({ versions: ['2026-07-28', '2025-11-25'] });
    try {
      const bridge = await startTestBridge({ upstream: hostile.url });
      const sdk = await connect(bridge.url, {
        capabilities: { capabilities: { elicitation: { form: {} } } },
      });
      let asked = 0;
      sdk.setRequestHandler(ElicitRequestSchema, () => {
        asked++;
        return { action: 'accept', content: { name: 'Ada' } };
      });
      const error = await callError(sdk.callTool({ name: 'ask-forever', arguments: {} }));
      expect(error.code).toBe(-32603);
      expect(error.message).toMatch(/asked for input 10 times/);
      expect(asked).toBe(MAX_INPUT_ROUNDS);
      // The session goes on: the next call is answered.
      expect(textOf(await sdk.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe(
        'still here',
      );
      await sdk.close();
    } finally {
      await hostile.close();
    }
  });

  /**
   * A client whose user leaves every form open: the elicitation is answered only by its
   * cancellation, whose reason `dismissed` gives.
   */
  async function clientWithOpenForm() {
    const sdk = await connect((await startTestBridge({ upstream: server.url })).url, {
      capabilities: { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
    });
    let shown!: () => void;
    const asked = new Promise<void>((resolve) => (shown = resolve));
    const dismissed = new Promise<string>((resolve) =>
      sdk.setRequestHandler(ElicitRequestSchema, (_request, { signal }) => {
        shown();
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            resolve(String(signal.reason));
            reject(new Error('dismissed'));
          }),
        );
      }),
    );
    return { sdk, asked, dismissed };
  }

  it('cancels the input requests still open at the client when it cancels the call', async () => {
    const { sdk, asked, dismissed } = await clientWithOpenForm();
    const call = new AbortController();
    const calling = sdk
      .callTool({ name: 'test_input_required_result_elicitation', arguments: {} }, undefined, {
        signal: call.signal,
      })
      .catch((error: unknown) => error);
    await asked;
    call.abort(new Error('the user closed the chat'));
    expect(await within('the form to be dismissed', 10_000, dismissed)).toMatch(
      /client cancelled the request/,
    );
    expect(await calling).toBeInstanceOf(Error);
    // The session goes on.
    const { tools } = await sdk.listTools();
    expect(tools.map((tool) => tool.name)).toContain('test_input_required_result_elicitation');
    await sdk.close();
  });

  it('cancels the other input requests of a round when the client fails one', async () => {
    const { sdk, asked, dismissed } = await clientWithOpenForm();
    sdk.setRequestHandler(CreateMessageRequestSchema, async () => {
      await asked;
      throw new Error('no model configured');
    });
    sdk.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
    const error = await callError(
      sdk.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} }),
    );
    expect(error.message).toMatch(/no model configured/);
    expect(await within('the form to be dismissed', 10_000, dismissed)).toMatch(
      /another input request of the same call failed/,
    );
    await sdk.close();
  });

  it('fails the call with a JSON-RPC error when the client lacks what the server asks for', async () => {
    const bridge = await startTestBridge({ upstream: server.url });
    const sdk = await connect(bridge.url, {
      capabilities: { capabilities: { elicitation: { form: {} } } },
    });
    sdk.setRequestHandler(ElicitRequestSchema, () => ({
      action: 'accept',
      content: { name: 'Ada' },
    }));
    const error = await callError(
      sdk.callTool({ name: 'test_input_required_result_sampling', arguments: {} }),
    );
    expect(error.message).toMatch(/sampling/);
    await sdk.close();
  });
});
