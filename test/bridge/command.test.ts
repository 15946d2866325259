/** `mcp-operator bridge` flags: the table the controller renders with, and clear refusals. */

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseBridgeArgs } from '../../src/bridge/command.ts';
import { bridgeArgs, BRIDGE_TOKEN_ENV } from '../../src/bridge/pod-contract.ts';
import { NODE } from './harness.ts';
import { CLI } from '../support/cli.ts';

describe('bridge flags', () => {
  it('reads back what bridgeArgs renders', () => {
    const argv = bridgeArgs({
      listen: '0.0.0.0:8080',
      path: '/mcp',
      sessionMode: 'Shared',
      maxSessions: 10,
      warmPool: 0,
      idleTimeout: '15m',
      requestTimeout: '90s',
      authTokenFile: '/etc/token',
      policyFile: '/etc/policy.json',
      discoveryTokenFile: '/etc/discovery/token',
      supervisorDir: '/var/run/mcp-bridge',
      allowedOrigins: 'https://a.example, https://b.example/',
    });
    const options = parseBridgeArgs(argv, { [BRIDGE_TOKEN_ENV]: 'from-env' });
    expect(options).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      sessionMode: 'Shared',
      maxSessions: 10,
      idleTimeoutMs: 900_000,
      requestTimeoutMs: 90_000,
      authTokenFile: '/etc/token',
      authToken: 'from-env',
      policyFile: '/etc/policy.json',
      discoveryTokenFile: '/etc/discovery/token',
      supervisorDir: '/var/run/mcp-bridge',
      allowedOrigins: ['https://a.example', 'https://b.example'],
    });
  });

  it('reads the replica address and the peers, which go together', () => {
    const argv = [
      '--replica-address',
      '10.1.2.3:8080',
      '--peers',
      'srv-peers.ns.svc:8080, [fd00::1]:8080',
      '--',
      'x',
    ];
    expect(parseBridgeArgs(argv, {}).replicas).toEqual({
      self: '10.1.2.3:8080',
      peers: ['srv-peers.ns.svc:8080', '[fd00::1]:8080'],
    });
    const refuse = (flags: string[]) => () => parseBridgeArgs([...flags, '--', 'x'], {});
    expect(refuse(['--peers', 'a:1'])).toThrow('--peers needs --replica-address');
    expect(refuse(['--replica-address', 'a:1'])).toThrow('--replica-address needs --peers');
    expect(refuse(['--replica-address', 'a:1', '--peers', 'b'])).toThrow(
      "invalid value for --peers: 'b' is not host:port",
    );
  });

  it('reads the OAuth flags, refusing incomplete or conflicting ones by name', () => {
    const oauth = [
      '--oauth-issuer',
      'https://auth.example.com',
      '--oauth-resource',
      'https://mcp.example.com/mcp',
    ];
    const parse = (flags: string[]) => parseBridgeArgs([...flags, '--', 'x'], {}).oauth;
    expect(parse([...oauth, '--oauth-scopes', 'mcp:tools, files:read'])).toEqual({
      issuer: 'https://auth.example.com',
      resource: 'https://mcp.example.com/mcp',
      scopes: ['mcp:tools', 'files:read'],
      clockSkewSeconds: 30,
    });
    expect(parse([])).toBeUndefined();
    const refuse = (flags: string[]) => () => parse(flags);
    expect(refuse(oauth.slice(0, 2))).toThrow('--oauth-issuer and --oauth-resource go together');
    expect(refuse(['--oauth-scopes', 'a'])).toThrow('--oauth-scopes needs --oauth-issuer');
    expect(refuse([...oauth, '--auth-token-file', '/t'])).toThrow(/exclude each other/);
    expect(refuse([...oauth.slice(0, 3), 'https://mcp.example.com/mcp#frag'])).toThrow(
      /invalid value for --oauth-resource: .* without a fragment/,
    );
    expect(refuse([...oauth, '--oauth-clock-skew', '10m'])).toThrow(
      "invalid value for --oauth-clock-skew: '10m' is not a duration from 0s to 5m",
    );
    expect(parse([...oauth, '--oauth-clock-skew', '0s'])?.clockSkewSeconds).toBe(0);
  });

  it('takes the server command after --', () => {
    const options = parseBridgeArgs(
      ['--listen', '127.0.0.1:9000', '--', 'npx', '-y', 'server', '--flag'],
      {},
    );
    expect(options.command).toEqual(['npx', '-y', 'server', '--flag']);
  });

  it('takes --upstream for proxy mode, alone', () => {
    const options = parseBridgeArgs(['--upstream', 'http://127.0.0.1:3000/mcp'], {});
    expect(options.upstream).toBe('http://127.0.0.1:3000/mcp');
    expect(options.command).toBeUndefined();
    const refuse = (argv: string[]) => () => parseBridgeArgs(argv, {});
    expect(refuse(['--upstream', 'ftp://x/mcp'])).toThrow(
      /--upstream: 'ftp:\/\/x\/mcp' is not an http\(s\) URL/,
    );
    expect(refuse(['--upstream', 'http://x/mcp', '--', 'server'])).toThrow(
      /--upstream and a command after -- exclude each other/,
    );
    expect(refuse(['--upstream', 'http://x/mcp', '--supervisor-dir', '/d'])).toThrow(
      /--supervisor-dir and --upstream exclude each other/,
    );
  });

  it('refuses bad flags with a message naming the flag', () => {
    const refuse = (argv: string[]) => () => parseBridgeArgs(argv, {});
    expect(refuse(['--', 'x', '--session-mode'])).not.toThrow();
    expect(refuse(['--session-mode', 'Pooled', '--', 'x'])).toThrow(
      /--session-mode: 'Pooled' is not PerSession or Shared/,
    );
    expect(refuse(['--idle-timeout', '10', '--', 'x'])).toThrow(
      /--idle-timeout: '10' is not a duration/,
    );
    expect(refuse(['--warm-pool', '9', '--max-sessions', '4', '--', 'x'])).toThrow(
      /--warm-pool: 9 exceeds --max-sessions 4/,
    );
    expect(refuse([])).toThrow(/give the server command after --/);
    expect(refuse(['--supervisor-dir', '/d', '--', 'x'])).toThrow(/exclude each other/);
  });

  it('exits 2 with one line and where to read more on bad arguments', () => {
    const result = spawnSync(NODE, [CLI, 'bridge', '--max-sessions', 'many', '--', 'x'], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      "invalid value for --max-sessions: 'many' is not an integer >= 1",
    );
    expect(result.stderr).toBe(
      "mcp-operator bridge: invalid value for --max-sessions: 'many' is not an integer >= 1\n" +
        'Run `mcp-operator bridge --help` for the flags.\n',
    );
  });
});
