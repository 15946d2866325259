import { describe, expect, it } from 'vitest';
import { toPackage } from '../src/resolved-package.ts';

/**
 * What the bridge believes of a `<id>.package` line (and the operator of a bridge's answer):
 * the server container shares the directory the line is read from, so it is checked against
 * the shapes each launcher's registry allows.
 */
describe('toPackage', () => {
  it('takes npm packages and versions', () => {
    expect(toPackage('npx', '@modelcontextprotocol/server-memory', '2026.8.31')).toEqual({
      launcher: 'npx',
      name: '@modelcontextprotocol/server-memory',
      version: '2026.8.31',
    });
    expect(toPackage('npx', 'JSONStream', '1.0.0-rc.1+build.5')?.version).toBe(
      '1.0.0-rc.1+build.5',
    );
  });

  it('takes normalized PyPI names with any PEP 440 version', () => {
    for (const version of [
      '2026.10.19',
      '1!2.0',
      '1.0rc1',
      '1.0.post2.dev3',
      '1.0+ubuntu_1',
      '2.0a',
    ]) {
      expect(toPackage('uvx', 'mcp-server-time', version)).toEqual({
        launcher: 'uvx',
        name: 'mcp-server-time',
        version,
      });
    }
  });

  it('refuses PyPI names as they are not normalized, and versions PEP 440 does not allow', () => {
    for (const name of ['MCP-Server-Time', 'mcp_server_time', 'mcp--time', '-time', '@scope/time'])
      expect(toPackage('uvx', name, '1.0')).toBeUndefined();
    for (const version of ['1.0-!-x', 'v1.0', 'latest', '1.0 1', '1..0', '1.0+', '1.0\u001b[2J'])
      expect(toPackage('uvx', 'mcp-server-time', version)).toBeUndefined();
  });

  it('refuses another launcher, an npm version with a PEP 440 epoch, and what is over its bound', () => {
    expect(toPackage('pipx', 'mcp-server-time', '1.0')).toBeUndefined();
    expect(toPackage('npx', 'left-pad', '1!2.0')).toBeUndefined();
    expect(toPackage('npx', 'a'.repeat(215), '1.0.0')).toBeUndefined();
    expect(toPackage('uvx', 'time', `1.${'0'.repeat(63)}`)).toBeUndefined();
    expect(toPackage('npx', 'left-pad', 1)).toBeUndefined();
  });
});
