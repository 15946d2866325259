/**
 * Local mode (`mcp-operator bridge -- <command>`): closing a session ends every process of its
 * server, also the grandchildren that a shell or `npx` starts, and never waits forever.
 */
import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../src/bridge/budget.ts';
import { SpawnLauncher } from '../../src/bridge/child/spawn.ts';
import type { JsonRpcMessage } from '../../src/mcp/jsonrpc.ts';
import { waitFor } from '../support/wait.ts';
import { NODE } from './harness.ts';
import { markedCommand, markedProcesses } from './pod.ts';
import { within } from '../support/wait.ts';

const fixture = (name: string): string => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const account = new ByteBudget({ session: Infinity, bridge: Infinity }).account();

function launch(command: string[]) {
  const [first, ...rest] = command;
  return new SpawnLauncher({
    command: first!,
    args: rest,
    maxLineBytes: 1024 * 1024,
    graceMs: 500,
  }).launch();
}

describe('SpawnLauncher', () => {
  it('stops the grandchildren of a server too, and the close ends in time', async () => {
    // `sh -c` -> node that ignores SIGTERM and the end of stdin: the server is a grandchild.
    const { command, mark } = markedCommand([
      '/bin/sh',
      '-c',
      '"$@"; exit $?',
      'sh',
      NODE,
      fixture('stubborn.ts'),
    ]);
    const transport = await launch(command);
    const messages: JsonRpcMessage[] = [];
    transport.attach({
      onMessage: (m) => messages.push(m),
      onBadLine: () => {},
      onClose: () => {},
    });
    await waitFor('the grandchild to start', () => messages[0]);
    expect(await markedProcesses(mark)).toHaveLength(2);
    transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, account);

    await within('closing the session', 10_000, transport.close());

    expect(await markedProcesses(mark)).toEqual([]);
  });
});
