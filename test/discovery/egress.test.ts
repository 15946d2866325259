/**
 * The discovery egress policy: which addresses it denies by default, in a pod and outside one,
 * and the real discover() against real servers on loopback through the guarded dispatcher:
 * refused by resolved address (a name, an IPv4-mapped IPv6 literal, a decimal IPv4 literal),
 * with nothing sent, and every new connection checked again (DNS rebinding).
 */

import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseControllerConfig } from '../../src/controller/config.ts';
import { discover } from '../../src/discovery/client.ts';
import {
  type EgressSettings,
  EgressGuard,
  egressPolicy,
  guardedDispatcher,
} from '../../src/discovery/egress.ts';
import { OperatorError } from '../../src/errors.ts';
import { type Running, fixtureTool, startModern, track } from './servers.ts';

const OUTSIDE: EgressSettings = { inCluster: false, denied: [], allowed: [] };
const IN_POD: EgressSettings = {
  inCluster: true,
  apiServerAddress: '10.96.0.1',
  denied: [],
  allowed: [],
};

const guard = (settings: EgressSettings) => new EgressGuard(egressPolicy(settings));

describe('the policy', () => {
  it('denies link-local and cloud metadata addresses wherever the operator runs', () => {
    for (const settings of [OUTSIDE, IN_POD]) {
      const g = guard(settings);
      expect(g.refusal('169.254.169.254')?.cidr).toBe('169.254.0.0/16');
      expect(g.refusal('fd00:ec2::254')?.cidr).toBe('fd00:ec2::254/128');
      expect(g.refusal('fe80::1')?.cidr).toBe('fe80::/10');
      expect(g.refusal('100.100.100.200')?.cidr).toBe('100.100.100.200/32');
      expect(g.refusal('::ffff:169.254.169.254')?.cidr).toBe('169.254.0.0/16');
      expect(g.refusal('10.1.2.3')).toBeUndefined();
      expect(g.refusal('2001:db8::1')).toBeUndefined();
    }
  });

  it("in a pod also denies loopback, 0.0.0.0 and the API server's Service address", () => {
    const g = guard(IN_POD);
    for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '0.0.0.0', '::']) {
      expect(g.refusal(address), address).toBeDefined();
    }
    expect(g.refusal('10.96.0.1')?.why).toBe("the API server's Service");
    expect(g.refusal('10.96.0.2')).toBeUndefined();
    expect(guard(OUTSIDE).refusal('127.0.0.1')).toBeUndefined();
  });

  it('denies a denied IPv4 address in every IPv6 form that embeds it', () => {
    const g = guard({ ...IN_POD, denied: ['10.0.0.0/8'] });
    const forms = (v4: string, hex: string) => [
      `::${v4}`, // IPv4-compatible (RFC 4291 2.5.5.1)
      `::ffff:${v4}`, // IPv4-mapped (RFC 4291 2.5.5.2)
      `::ffff:0:${v4}`, // IPv4-translated (RFC 2765)
      `64:ff9b::${v4}`, // NAT64 well-known prefix (RFC 6052)
      `64:ff9b::${hex}`,
      `2002:${hex}::1`, // 6to4 (RFC 3056)
      `2002:${hex}:abcd:1:2:3:4`,
    ];
    for (const [v4, hex, cidr] of [
      ['169.254.169.254', 'a9fe:a9fe', '169.254.0.0/16'],
      ['127.0.0.1', '7f00:1', '127.0.0.0/8'],
      ['100.100.100.200', '6464:64c8', '100.100.100.200/32'],
      ['10.96.0.1', 'a60:1', '10.96.0.1/32'],
      ['10.1.2.3', 'a01:203', '10.0.0.0/8'],
    ] as const) {
      for (const address of forms(v4, hex)) {
        expect(g.refusal(address)?.cidr, address).toBe(cidr);
      }
    }
    for (const address of ['64:ff9b::808:808', '2002:808:808::1', '::ffff:8.8.8.8']) {
      expect(g.refusal(address), address).toBeUndefined();
    }
    // An exception for the IPv4 address covers its IPv6 forms too.
    const allowing = guard({ ...IN_POD, denied: ['10.0.0.0/8'], allowed: ['10.5.0.0/16'] });
    expect(allowing.refusal('64:ff9b::10.5.0.1')).toBeUndefined();
    expect(allowing.refusal('2002:a05:1::1')).toBeUndefined();
  });

  it('denies a denied IPv4 address behind Teredo and the local-use NAT64 prefix', () => {
    const g = guard({ ...IN_POD, denied: ['10.0.0.0/8'] });
    const word = (high: number, low: number) => ((high << 8) | low).toString(16);
    const forms = (v4: string) => {
      const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
      const x = (octet: number) => ~octet & 0xff;
      return [
        // Teredo (RFC 4380): the client's address XORed, the server's as it is.
        `2001:0:4136:e378:8000:63bf:${word(x(a), x(b))}:${word(x(c), x(d))}`,
        `2001:0:${word(a, b)}:${word(c, d)}:8000:63bf:3fff:fdd2`,
        // 64:ff9b:1::/48 (RFC 8215), at each place RFC 6052 2.2 puts the address.
        `64:ff9b:1:${word(a, b)}:${word(0, c)}:${word(d, 0)}::`, // /48
        `64:ff9b:1:${word(0x12, a)}:${word(0, b)}:${word(c, d)}::`, // /56
        `64:ff9b:1:abcd:${word(0, a)}:${word(b, c)}:${word(d, 0)}:0`, // /64
        `64:ff9b:1::${v4}`, // /96
        `64:ff9b:1:1:2:3:${word(a, b)}:${word(c, d)}`,
      ];
    };
    for (const [v4, cidr] of [
      ['169.254.169.254', '169.254.0.0/16'],
      ['127.0.0.1', '127.0.0.0/8'],
      ['100.100.100.200', '100.100.100.200/32'],
      ['10.96.0.1', '10.96.0.1/32'],
      ['10.1.2.3', '10.0.0.0/8'],
    ] as const) {
      for (const address of forms(v4)) expect(g.refusal(address)?.cidr, address).toBe(cidr);
    }
    for (const address of forms('8.8.8.8')) expect(g.refusal(address), address).toBeUndefined();
    // An exception for the IPv4 address covers these forms too.
    const allowing = (settings: EgressSettings) =>
      guard({ ...settings, denied: ['10.0.0.0/8'], allowed: ['10.5.0.0/16'] });
    for (const address of forms('10.5.0.1'))
      expect(allowing(OUTSIDE).refusal(address), address).toBeUndefined();
    // The network's prefix length is not in the address, so every reading that fits is judged:
    // in a pod, the /48 form of 10.5.0.1 read as /64 is 0.1.0.0, this host's range.
    expect(allowing(IN_POD).refusal(forms('10.5.0.1')[2]!)?.cidr).toBe('0.0.0.0/8');
  });

  it('adds the configured ranges, and an allowed range wins over every denied one', () => {
    const g = guard({
      ...IN_POD,
      denied: ['10.0.0.0/8'],
      allowed: ['127.0.0.2/32', '10.5.0.0/16'],
    });
    expect(g.refusal('10.1.2.3')?.why).toBe('denied by --discovery-denied-cidrs');
    expect(g.refusal('10.5.0.9')).toBeUndefined();
    expect(g.refusal('127.0.0.2')).toBeUndefined();
    expect(g.refusal('127.0.0.1')).toBeDefined();
  });

  it('comes from flags or the environment, in a pod when KUBERNETES_SERVICE_HOST is set', () => {
    const config = parseControllerConfig(['--discovery-allowed-cidrs=127.0.0.2/32, fd00::/8'], {
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      MCP_OPERATOR_DISCOVERY_DENIED_CIDRS: '192.168.0.0/16',
    });
    expect(config.discoveryEgress).toEqual({
      inCluster: true,
      apiServerAddress: '10.96.0.1',
      denied: ['192.168.0.0/16'],
      allowed: ['127.0.0.2/32', 'fd00::/8'],
    });
    expect(() => parseControllerConfig(['--discovery-denied-cidrs=10.0.0.0/33'], {})).toThrow(
      "invalid value for --discovery-denied-cidrs: '10.0.0.0/33' is not an address range such as 10.0.0.0/8 or fd00::/8",
    );
    expect(() => parseControllerConfig(['--discovery-allowed-cidrs=metadata'], {})).toThrow(
      /'metadata' is not an address range/,
    );
  });
});

/** A server on `host` (and `port`, or one the kernel picks) that counts the requests it gets. */
async function counting(host: string, port = 0): Promise<Running & { requests(): number }> {
  let requests = 0;
  const server: Server = createServer((_req, res) => {
    requests++;
    res.writeHead(500, { connection: 'close' }).end();
  });
  server.listen(port, host);
  await once(server, 'listening');
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${bound}/mcp`,
    requests: () => requests,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function refusal(url: string, dispatcher: ReturnType<typeof guardedDispatcher>) {
  const error: unknown = await discover({ url, dispatcher, timeoutMs: 5_000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OperatorError);
  expect((error as OperatorError).code).toBe('MCPOP_DISCOVERY_EGRESS_DENIED');
  return (error as OperatorError).message;
}

describe('discovery through the guarded dispatcher', () => {
  it('refuses loopback in a pod by the address a URL resolves to, and sends nothing', async () => {
    const server = await track(counting('127.0.0.1'));
    const dispatcher = guardedDispatcher(guard(IN_POD));
    const { port } = new URL(server.url);
    const message = await refusal(`http://localhost:${port}/mcp?token=x`, dispatcher);
    expect(message).toBe(
      `discovery does not connect to http://localhost:${port}/mcp: localhost (127.0.0.1) is in 127.0.0.0/8 (loopback, the operator's own pod), which the operator's egress policy denies; if the server is meant to be reached there, the operator's administrator can allow the range (--discovery-allowed-cidrs, chart value discovery.egress.allowedCIDRs)`,
    );
    for (const literal of [`[::ffff:127.0.0.1]`, '2130706433', '0x7f.1', '127.0.0.1']) {
      expect(await refusal(`http://${literal}:${port}/mcp`, dispatcher)).toMatch(
        /: 127\.0\.0\.1 is in 127\.0\.0\.0\/8 |: ::ffff:7f00:1 is in 127\.0\.0\.0\/8 /,
      );
    }
    expect(server.requests()).toBe(0);
    await dispatcher.close();
  });

  it('lets through what the policy allows, unchanged', async () => {
    const allowed = await track(startModern(() => [fixtureTool('fine')]));
    const dispatcher = guardedDispatcher(guard({ ...IN_POD, allowed: ['127.0.0.1/32'] }));
    const found = await discover({ url: allowed.url, dispatcher });
    expect(found.tools.map((t) => t.name)).toEqual(['fine']);
    await dispatcher.close();
  });

  it('checks every new connection: a name that rebinds to a denied address gets nothing', async () => {
    const good = await track(counting('127.0.0.1'));
    // The same port on another loopback address: only the address decides who answers.
    const { port } = new URL(good.url);
    const bad = await track(counting('127.0.0.2', Number(port)));
    // A resolver whose answer changes between lookups is what a DNS rebinding attack needs;
    // no DNS server here can be made to do that, so this lookup stands in for one.
    let lookups = 0;
    const rebinding = (host: string) => {
      lookups++;
      expect(host).toBe('rebind.example');
      return Promise.resolve(lookups === 1 ? ['127.0.0.1'] : ['127.0.0.2']);
    };
    const dispatcher = guardedDispatcher(
      guard({ ...OUTSIDE, denied: ['127.0.0.2/32'] }),
      rebinding,
    );
    const url = `http://rebind.example:${port}/mcp`;
    const first = await discover({ url, dispatcher, timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect((first as OperatorError).code).toBe('MCPOP_DISCOVERY_HTTP_STATUS');
    expect(good.requests()).toBeGreaterThan(0);
    const second = await refusal(url, dispatcher);
    expect(second).toContain('rebind.example (127.0.0.2) is in 127.0.0.2/32');
    expect(bad.requests()).toBe(0);
    expect(lookups).toBeGreaterThanOrEqual(2);

    // A name with one denied address among its answers is refused outright.
    const mixed = guardedDispatcher(guard({ ...OUTSIDE, denied: ['127.0.0.2/32'] }), () =>
      Promise.resolve(['127.0.0.1', '127.0.0.2']),
    );
    expect(await refusal(url, mixed)).toContain('rebind.example (127.0.0.2)');
    await Promise.all([dispatcher.close(), mixed.close()]);
  });
});
