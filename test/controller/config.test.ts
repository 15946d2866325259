import { describe, expect, it } from 'vitest';
import { controllerUsage, parseControllerConfig } from '../../src/controller/config.ts';

describe('parseControllerConfig', () => {
  it('has defaults that need nothing set', () => {
    const config = parseControllerConfig([], {});
    expect(config).toMatchObject({
      namespaces: [],
      concurrency: 32,
      bridgeImage: 'mcp-operator:latest',
      metricsAddress: ':8080',
      resyncPeriodMs: 600_000,
      shutdownTimeoutMs: 20_000,
      logLevel: 'info',
    });
    expect(config.leaderElection).toMatchObject({
      enabled: true,
      namespace: 'default',
      name: 'mcp-operator',
    });
    expect(config.kubeconfig).toBeUndefined();
  });

  it('takes flags over environment variables over defaults', () => {
    const env = {
      MCP_OPERATOR_NAMESPACES: 'a, b',
      MCP_OPERATOR_CONCURRENCY: '3',
      MCP_OPERATOR_BRIDGE_IMAGE: 'env/image:1',
      POD_NAMESPACE: 'operators',
      POD_NAME: 'mcp-operator-abc',
    };
    const config = parseControllerConfig(['--concurrency', '5', '--no-leader-elect'], env);
    expect(config.namespaces).toEqual(['a', 'b']);
    expect(config.concurrency).toBe(5);
    expect(config.bridgeImage).toBe('env/image:1');
    expect(config.leaderElection.enabled).toBe(false);
    expect(config.leaderElection.namespace).toBe('operators');
    expect(config.leaderElection.identity).toMatch(/^mcp-operator-abc_[0-9a-f]{8}$/);
  });

  it('reads --leader-elect alone, with a value, and negated', () => {
    const env = { MCP_OPERATOR_LEADER_ELECT: 'false' };
    expect(parseControllerConfig(['--leader-elect'], env).leaderElection.enabled).toBe(true);
    expect(parseControllerConfig(['--leader-elect=false'], {}).leaderElection.enabled).toBe(false);
    expect(parseControllerConfig([], env).leaderElection.enabled).toBe(false);
  });

  it('gives every process its own identity', () => {
    const a = parseControllerConfig([], {}).leaderElection.identity;
    const b = parseControllerConfig([], {}).leaderElection.identity;
    expect(a).not.toBe(b);
  });

  it('refuses bad values, naming the flag', () => {
    expect(() => parseControllerConfig(['--concurrency=0'], {})).toThrow(/--concurrency/);
    expect(() => parseControllerConfig(['--resync-period=10'], {})).toThrow(/--resync-period/);
    expect(() => parseControllerConfig(['--shutdown-timeout=0s'], {})).toThrow(
      /--shutdown-timeout/,
    );
    expect(() => parseControllerConfig(['--leader-elect=maybe'], {})).toThrow(/--leader-elect/);
    expect(() => parseControllerConfig(['--image-pull-policy=Sometimes'], {})).toThrow(
      /--image-pull-policy/,
    );
    expect(() => parseControllerConfig(['--unknown'], {})).toThrow();
  });

  it('lists every flag with its variable in the usage text', () => {
    const usage = controllerUsage('controller');
    expect(usage).toContain('--bridge-image');
    expect(usage).toContain('MCP_OPERATOR_BRIDGE_IMAGE');
  });
});
