import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { dump } from 'js-yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadClientConfig } from '../../src/kube/config.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-test-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const b64 = (text: string) => Buffer.from(text).toString('base64');

async function kubeconfig(name: string, content: object): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, dump(content));
  return path;
}

const contextFor = (cluster: string, user: string) => ({
  contexts: [{ name: 'ctx', context: { cluster, user } }],
  'current-context': 'ctx',
});

describe('loadClientConfig', () => {
  it('reads a kubeconfig with inline certificates (what the test control plane writes)', async () => {
    const path = await kubeconfig('config', {
      clusters: [
        {
          name: 'local',
          cluster: { server: 'https://127.0.0.1:6443/', 'certificate-authority-data': b64('CA') },
        },
      ],
      users: [
        {
          name: 'admin',
          user: { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
        },
      ],
      ...contextFor('local', 'admin'),
    });
    const config = await loadClientConfig({ kubeconfig: path, env: {} });
    expect(config.server).toBe('https://127.0.0.1:6443');
    expect(config.tls.ca?.toString()).toBe('CA');
    expect(config.tls.cert?.toString()).toBe('CERT');
    expect(config.tls.key?.toString()).toBe('KEY');
    expect(await config.authHeaders()).toEqual({});
  });

  it('merges a $KUBECONFIG list: first entry of each name and first current-context win', async () => {
    await writeFile(join(dir, 'ca.crt'), 'CA FROM FILE');
    await writeFile(join(dir, 'token'), 'file-token\n');
    const first = await kubeconfig('a', {
      clusters: [
        { name: 'c', cluster: { server: 'https://first', 'certificate-authority': 'ca.crt' } },
      ],
      ...contextFor('c', 'u'),
    });
    const second = await kubeconfig('b', {
      clusters: [{ name: 'c', cluster: { server: 'https://second' } }],
      users: [{ name: 'u', user: { tokenFile: 'token' } }],
      contexts: [{ name: 'other', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'other',
    });
    const config = await loadClientConfig({ env: { KUBECONFIG: [first, second].join(delimiter) } });
    expect(config.server).toBe('https://first');
    // Relative paths are relative to the file that names them.
    expect(config.tls.ca?.toString()).toBe('CA FROM FILE');
    expect(await config.authHeaders()).toEqual({ Authorization: 'Bearer file-token' });
  });

  it('sends a static token and honours insecure-skip-tls-verify and tls-server-name', async () => {
    const path = await kubeconfig('config', {
      clusters: [
        {
          name: 'c',
          cluster: {
            server: 'https://10.0.0.1',
            'insecure-skip-tls-verify': true,
            'tls-server-name': 'api.example.com',
          },
        },
      ],
      users: [{ name: 'u', user: { token: 'static' } }],
      ...contextFor('c', 'u'),
    });
    const config = await loadClientConfig({ kubeconfig: path, env: {} });
    expect(config.tls).toMatchObject({ rejectUnauthorized: false, servername: 'api.example.com' });
    expect(await config.authHeaders()).toEqual({ Authorization: 'Bearer static' });
  });

  it('runs an exec credential plugin through client-node', async () => {
    const plugin = join(dir, 'plugin.mjs');
    const credential = {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'from-exec' },
    };
    await writeFile(plugin, `process.stdout.write(${JSON.stringify(JSON.stringify(credential))});`);
    const path = await kubeconfig('config', {
      clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1' } }],
      users: [
        {
          name: 'u',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: process.execPath,
              args: [plugin],
              interactiveMode: 'Never',
            },
          },
        },
      ],
      ...contextFor('c', 'u'),
    });
    const config = await loadClientConfig({ kubeconfig: path, env: {} });
    expect(await config.authHeaders()).toEqual({ Authorization: 'Bearer from-exec' });
  });

  it('falls back to the in-cluster ServiceAccount, re-reading its token', async () => {
    await writeFile(join(dir, 'token'), 'sa-token');
    await writeFile(join(dir, 'ca.crt'), 'CLUSTER CA');
    const env = {
      HOME: dir,
      KUBERNETES_SERVICE_HOST: 'fd00::1',
      KUBERNETES_SERVICE_PORT: '443',
    };
    const config = await loadClientConfig({ env, serviceAccountDir: dir });
    expect(config.server).toBe('https://[fd00::1]:443');
    expect(config.tls.ca?.toString()).toBe('CLUSTER CA');
    expect(await config.authHeaders()).toEqual({ Authorization: 'Bearer sa-token' });
    expect(config.source).toBe('in-cluster ServiceAccount');
  });

  it('uses the context --context names instead of the current one', async () => {
    const path = await kubeconfig('config', {
      clusters: [
        { name: 'prod', cluster: { server: 'https://prod.example:6443' } },
        { name: 'dev', cluster: { server: 'https://dev.example:6443' } },
      ],
      users: [{ name: 'me', user: { token: 't' } }],
      contexts: [
        { name: 'prod', context: { cluster: 'prod', user: 'me' } },
        { name: 'dev', context: { cluster: 'dev', user: 'me', namespace: 'team' } },
      ],
      'current-context': 'prod',
    });
    const dev = await loadClientConfig({ kubeconfig: path, context: 'dev', env: {} });
    expect([dev.server, dev.namespace]).toEqual(['https://dev.example:6443', 'team']);
    await expect(loadClientConfig({ kubeconfig: path, context: 'qa', env: {} })).rejects.toThrow(
      /no context qa/,
    );
  });

  it('says what is missing', async () => {
    await expect(loadClientConfig({ env: { HOME: dir }, serviceAccountDir: dir })).rejects.toThrow(
      /no --kubeconfig, \$KUBECONFIG, ~\/.kube\/config or in-cluster ServiceAccount/,
    );
    const noContext = await kubeconfig('none', { clusters: [] });
    await expect(loadClientConfig({ kubeconfig: noContext, env: {} })).rejects.toThrow(
      /no current context/,
    );
    const basic = await kubeconfig('basic', {
      clusters: [{ name: 'c', cluster: { server: 'https://x' } }],
      users: [{ name: 'u', user: { username: 'a', password: 'b' } }],
      ...contextFor('c', 'u'),
    });
    await expect(loadClientConfig({ kubeconfig: basic, env: {} })).rejects.toThrow(
      /basic authentication/,
    );
  });
});
