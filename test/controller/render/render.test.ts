import type { V1PodSpec, V1Service, V1ServiceAccount } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { BRIDGE_MOUNT_PATH, BRIDGE_VOLUME_NAME } from '../../../src/bridge/pod-contract.ts';
import type { StoredMCPServer } from '../../../src/api/v1alpha1/stored.ts';
import { endpointOf, render } from '../../../src/controller/render/render.ts';
import {
  OPTIONS,
  containerOf,
  deploymentOf,
  flag,
  kinds,
  mcpServer,
  podSpecOf,
  stdio,
  streamableHttp,
} from './fixtures.ts';

const OWNER = {
  apiVersion: 'mcp-operator.dev/v1alpha1',
  kind: 'MCPServer',
  name: 'everything',
  uid: '0b7c9a52-1f0e-4d6a-9a43-5a8f2f1d3c11',
  controller: true,
  blockOwnerDeletion: true,
};

const LABELS = {
  'app.kubernetes.io/name': 'mcp-server',
  'app.kubernetes.io/instance': 'everything',
  'app.kubernetes.io/managed-by': 'mcp-operator',
};

describe('render: which objects', () => {
  it('deploys nothing for a url server', () => {
    expect(render(mcpServer({ url: 'https://mcp.example.com/mcp' }), OPTIONS)).toEqual([]);
  });

  it('renders ServiceAccount, Services and Deployment for an image server, in apply order', () => {
    expect(kinds(render(stdio(), OPTIONS))).toEqual([
      'ServiceAccount/everything',
      'Service/everything',
      'Service/everything-peers',
      'Deployment/everything',
    ]);
    expect(kinds(render(streamableHttp(), OPTIONS))).toEqual([
      'ServiceAccount/everything',
      'Service/everything',
      'Service/everything-peers',
      'Deployment/everything',
    ]);
    expect(kinds(render(streamableHttp({ bridge: { enabled: false } }), OPTIONS))).toEqual([
      'ServiceAccount/everything',
      'Service/everything',
      'Deployment/everything',
    ]);
  });

  it('owns every object as controller, in the server namespace, with the standard labels', () => {
    for (const object of render(
      stdio({ tools: { driftPolicy: 'Enforce', approved: { tools: [] } } }),
      OPTIONS,
    )) {
      expect(object.metadata?.namespace).toBe('team-a');
      expect(object.metadata?.ownerReferences).toEqual([OWNER]);
      expect(object.metadata?.labels).toEqual(LABELS);
    }
  });

  it('is pure: the same input renders the same objects and is not modified', () => {
    const server = stdio({ env: [{ name: 'A', value: '1' }], pod: { labels: { team: 'a' } } });
    const before = structuredClone(server);
    expect(render(server, OPTIONS)).toEqual(render(server, OPTIONS));
    expect(server).toEqual(before);
  });
});

describe('render: stdio server', () => {
  const pod = podSpecOf(stdio({ args: ['--verbose'] }));

  it('copies busybox and the supervisor into the shared emptyDir with our image', () => {
    const install = containerOf(pod, 'bridge-install');
    expect(pod.initContainers).toHaveLength(1);
    expect(install.image).toBe(OPTIONS.image);
    expect(install.command).toEqual(['mcp-operator', 'bridge-install', '--to', BRIDGE_MOUNT_PATH]);
    expect(install.volumeMounts).toContainEqual({
      name: BRIDGE_VOLUME_NAME,
      mountPath: BRIDGE_MOUNT_PATH,
    });
  });

  it('runs the user command and args under the supervisor, as separate argv entries', () => {
    const server = containerOf(pod, 'server');
    expect(server.image).toBe('node:24-slim');
    expect(server.command).toEqual([
      `${BRIDGE_MOUNT_PATH}/busybox`,
      'sh',
      `${BRIDGE_MOUNT_PATH}/supervisor.sh`,
      '--',
      'npx',
      '-y',
      '@modelcontextprotocol/server-everything',
      '--verbose',
    ]);
    expect(server.args).toBeUndefined();
    expect(server.ports).toBeUndefined();
    expect(server.volumeMounts).toContainEqual({
      name: BRIDGE_VOLUME_NAME,
      mountPath: BRIDGE_MOUNT_PATH,
    });
  });

  it('serves the bridge on the MCP port with health and readiness probes', () => {
    const bridge = containerOf(pod, 'bridge');
    expect(bridge.image).toBe(OPTIONS.image);
    expect(bridge.command?.slice(0, 2)).toEqual(['mcp-operator', 'bridge']);
    expect(flag(bridge.command, '--listen')).toBe('0.0.0.0:8080');
    expect(flag(bridge.command, '--path')).toBe('/mcp');
    expect(flag(bridge.command, '--supervisor-dir')).toBe(BRIDGE_MOUNT_PATH);
    expect(bridge.ports).toEqual([{ name: 'mcp', containerPort: 8080, protocol: 'TCP' }]);
    expect(bridge.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'mcp' });
    expect(bridge.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'mcp' });
    expect(bridge.volumeMounts).toContainEqual({
      name: BRIDGE_VOLUME_NAME,
      mountPath: BRIDGE_MOUNT_PATH,
    });
  });

  it('shares one emptyDir between the three containers', () => {
    expect(pod.volumes).toContainEqual({ name: BRIDGE_VOLUME_NAME, emptyDir: {} });
    expect(pod.containers.map((c) => c.name)).toEqual(['server', 'bridge']);
  });

  it('passes the API defaults to the bridge when spec.bridge is unset', () => {
    const command = containerOf(pod, 'bridge').command;
    expect(flag(command, '--session-mode')).toBe('PerSession');
    expect(flag(command, '--max-sessions')).toBe('64');
    expect(flag(command, '--warm-pool')).toBe('0');
    expect(flag(command, '--idle-timeout')).toBe('15m');
    expect(flag(command, '--request-timeout')).toBe('5m');
    expect(flag(command, '--auth-token-file')).toBeUndefined();
    expect(flag(command, '--policy-file')).toBeUndefined();
    expect(flag(command, '--audit')).toBeUndefined();
    expect(flag(command, '--audit-arguments')).toBe('None');
  });

  it('names the MCPServer in every audit event and passes spec.bridge.audit', () => {
    const server = stdio({ bridge: { audit: { enabled: false, arguments: 'Redacted' } } });
    const command = containerOf(podSpecOf(server), 'bridge').command;
    expect(flag(command, '--audit-server')).toBe(
      `${server.metadata.namespace}/${server.metadata.name}`,
    );
    expect(flag(command, '--audit')).toBe('off');
    expect(flag(command, '--audit-arguments')).toBe('Redacted');
  });

  it('passes spec.bridge, port and path to the bridge', () => {
    const server = stdio({
      port: 9000,
      path: '/v1/mcp',
      bridge: { sessionMode: 'Shared', maxSessions: 5, idleTimeout: '1h', requestTimeout: '30s' },
    });
    const bridge = containerOf(podSpecOf(server), 'bridge');
    expect(flag(bridge.command, '--listen')).toBe('0.0.0.0:9000');
    expect(flag(bridge.command, '--path')).toBe('/v1/mcp');
    expect(flag(bridge.command, '--session-mode')).toBe('Shared');
    expect(flag(bridge.command, '--max-sessions')).toBe('5');
    expect(flag(bridge.command, '--warm-pool')).toBe('0');
    expect(flag(bridge.command, '--idle-timeout')).toBe('1h');
    expect(flag(bridge.command, '--request-timeout')).toBe('30s');
    expect(bridge.ports?.[0]?.containerPort).toBe(9000);
    expect(endpointOf(server)).toBe('http://everything.team-a.svc:9000/v1/mcp');
  });

  it('passes a warm pool to the bridge', () => {
    const bridge = containerOf(podSpecOf(stdio({ bridge: { warmPool: 2 } })), 'bridge');
    expect(flag(bridge.command, '--warm-pool')).toBe('2');
    expect(flag(bridge.command, '--session-mode')).toBe('PerSession');
  });

  it('uses the operator image pull policy for its own containers only', () => {
    const spec = podSpecOf(stdio(), { ...OPTIONS, imagePullPolicy: 'Always' });
    expect(containerOf(spec, 'bridge').imagePullPolicy).toBe('Always');
    expect(containerOf(spec, 'bridge-install').imagePullPolicy).toBe('Always');
    expect(containerOf(spec, 'server').imagePullPolicy).toBeUndefined();
  });
});

describe('render: replicas of a stdio server', () => {
  const peersOf = (server: StoredMCPServer) =>
    render(server, OPTIONS).find((o) => o.metadata?.name?.endsWith('-peers')) as V1Service;

  it('adds a headless Service that lists every pod, ready or not, for the bridges', () => {
    expect(peersOf(stdio({ replicas: 3 }))).toMatchObject({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'everything-peers', namespace: 'team-a', labels: LABELS },
      spec: {
        clusterIP: 'None',
        publishNotReadyAddresses: true,
        selector: {
          'app.kubernetes.io/name': 'mcp-server',
          'app.kubernetes.io/instance': 'everything',
        },
        ports: [
          { name: 'mcp', port: 8080, targetPort: 'mcp', protocol: 'TCP', appProtocol: 'http' },
        ],
      },
    });
  });

  it("tells each bridge its own address (the pod IP) and its peers' Service", () => {
    const bridge = containerOf(podSpecOf(stdio({ port: 9000 })), 'bridge');
    expect(flag(bridge.command, '--peers')).toBe('everything-peers.team-a.svc:9000');
    expect(flag(bridge.command, '--replica-address')).toBe('$(MCP_BRIDGE_POD_IP):9000');
    expect(bridge.env).toEqual([
      { name: 'MCP_BRIDGE_POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    ]);
  });

  it('renders one pod template for every replica count, so scaling restarts nothing', () => {
    const template = (replicas: number) => deploymentOf(stdio({ replicas })).spec?.template;
    expect(template(3)).toEqual(template(1));
  });

  it('keeps the peer Service name a DNS label for the longest server name', () => {
    const longest = 'a'.repeat(63);
    const name = peersOf(mcpServer({ ...stdio().spec }, longest)).metadata?.name ?? '';
    expect(name).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name.endsWith('-peers')).toBe(true);
    const other = peersOf(mcpServer({ ...stdio().spec }, `${'a'.repeat(62)}b`)).metadata?.name;
    expect(other).not.toBe(name);
  });
});

describe('render: bearer token', () => {
  const server = stdio({ auth: { secretRef: { name: 'clients', key: 'bearer' } } });
  const pod = podSpecOf(server);

  it('mounts the Secret key as a file into the bridge only, and points the bridge at it', () => {
    const bridge = containerOf(pod, 'bridge');
    const volume = pod.volumes?.find((v) => v.secret?.secretName === 'clients');
    expect(volume?.secret).toEqual({
      secretName: 'clients',
      items: [{ key: 'bearer', path: 'token' }],
      defaultMode: 0o440,
    });
    const mount = bridge.volumeMounts?.find((m) => m.name === volume?.name);
    expect(mount?.readOnly).toBe(true);
    expect(flag(bridge.command, '--auth-token-file')).toBe(`${mount?.mountPath}/token`);
    for (const name of ['server', 'bridge-install']) {
      expect(containerOf(pod, name).volumeMounts?.map((m) => m.name)).not.toContain(volume?.name);
    }
  });

  it('never puts the token into an environment variable', () => {
    const env = [...(pod.initContainers ?? []), ...pod.containers].flatMap((c) => c.env ?? []);
    expect(env.filter((e) => e.valueFrom?.secretKeyRef?.name === 'clients')).toEqual([]);
    expect(JSON.stringify(pod.containers.map((c) => c.envFrom ?? []))).not.toContain('clients');
  });

  it('defaults the key to token', () => {
    const spec = podSpecOf(stdio({ auth: { secretRef: { name: 'clients' } } }));
    expect(spec.volumes?.find((v) => v.secret)?.secret?.items).toEqual([
      { key: 'token', path: 'token' },
    ]);
  });
});

describe('render: streamable-http server behind the bridge (proxy mode)', () => {
  const server = streamableHttp({ command: ['weather'], args: ['--http', '--port=3000'] });
  const pod = podSpecOf(server);
  const container = containerOf(pod, 'server');
  const bridge = containerOf(pod, 'bridge');

  it('runs the user container with its own command and args, and the bridge beside it', () => {
    expect(pod.initContainers).toBeUndefined();
    expect(pod.containers.map((c) => c.name)).toEqual(['server', 'bridge']);
    expect(container.image).toBe('ghcr.io/example/weather:2');
    expect(container.command).toEqual(['weather']);
    expect(container.args).toEqual(['--http', '--port=3000']);
    expect(pod.volumes?.map((v) => v.name)).not.toContain(BRIDGE_VOLUME_NAME);
  });

  it('points the bridge at the server on localhost, listening on its own port', () => {
    expect(flag(bridge.command, '--upstream')).toBe('http://127.0.0.1:3000/mcp');
    expect(flag(bridge.command, '--listen')).toBe('0.0.0.0:8099');
    expect(flag(bridge.command, '--supervisor-dir')).toBeUndefined();
    expect(bridge.ports).toEqual([{ name: 'mcp', containerPort: 8099, protocol: 'TCP' }]);
    expect(bridge.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'mcp' });
    const custom = containerOf(podSpecOf(streamableHttp({ bridge: { port: 9000 } })), 'bridge');
    expect(flag(custom.command, '--listen')).toBe('0.0.0.0:9000');
  });

  it("probes the server's port over TCP under another name, so the Service reaches the bridge", () => {
    expect(container.ports).toEqual([
      { name: 'mcp-upstream', containerPort: 3000, protocol: 'TCP' },
    ]);
    expect(container.readinessProbe?.tcpSocket).toEqual({ port: 'mcp-upstream' });
    const svc = render(server, OPTIONS).find((o) => o.kind === 'Service') as V1Service;
    expect(svc.spec?.ports).toEqual([
      { name: 'mcp', port: 3000, targetPort: 'mcp', protocol: 'TCP', appProtocol: 'http' },
    ]);
    expect(endpointOf(server)).toBe('http://everything.team-a.svc:3000/mcp');
  });

  it('gives the bridge the policy and the discovery token under Enforce', () => {
    const enforced = streamableHttp({ tools: { driftPolicy: 'Enforce', approved: { tools: [] } } });
    const command = containerOf(podSpecOf(enforced), 'bridge').command;
    expect(flag(command, '--policy-file')).toBeDefined();
    expect(flag(command, '--discovery-token-file')).toBeDefined();
  });

  it('gives the bridge the OAuth flags and the introspection Secret exactly as a stdio bridge', () => {
    const oauth = {
      issuer: 'https://auth.example.com',
      resource: 'https://mcp.example.com/mcp',
      scopes: ['mcp:tools', 'mcp:read'],
      introspection: { secretRef: { name: 'introspection-client' } },
      discovery: { secretRef: { name: 'discovery-client' } },
    };
    const oauthOf = (spec: V1PodSpec) => {
      const command = containerOf(spec, 'bridge').command ?? [];
      return {
        flags: command.flatMap((arg, i) =>
          arg.startsWith('--oauth-') ? [[arg, command[i + 1]]] : [],
        ),
        mounts: containerOf(spec, 'bridge').volumeMounts?.filter((m) => m.name.startsWith('oauth')),
        volumes: spec.volumes?.filter((volume) => volume.name.startsWith('oauth')),
      };
    };
    const pod = podSpecOf(streamableHttp({ oauth }));
    const proxied = oauthOf(pod);
    expect(proxied).toEqual(oauthOf(podSpecOf(stdio({ oauth }))));
    expect(proxied.flags).toEqual([
      ['--oauth-issuer', 'https://auth.example.com'],
      ['--oauth-resource', 'https://mcp.example.com/mcp'],
      ['--oauth-scopes', 'mcp:tools mcp:read'],
      ['--oauth-clock-skew', '30s'],
      ['--oauth-introspection-dir', '/var/run/secrets/mcp-operator/oauth-introspection'],
    ]);
    expect(proxied.volumes?.map((volume) => volume.secret?.secretName)).toEqual([
      'introspection-client',
    ]);
    // The client credentials are the bridge's alone: the server container never mounts them.
    expect(containerOf(pod, 'server').volumeMounts?.map((mount) => mount.name)).toEqual(['tmp']);
  });
});

describe('render: streamable-http server without the bridge (bridge.enabled false)', () => {
  const server = streamableHttp({ bridge: { enabled: false } });
  const pod = podSpecOf(server);
  const container = containerOf(pod, 'server');

  it('runs only the user container', () => {
    expect(pod.containers.map((c) => c.name)).toEqual(['server']);
  });

  it('keeps the image entrypoint when command and args are unset', () => {
    expect(container.command).toBeUndefined();
    expect(container.args).toBeUndefined();
  });

  it('probes the MCP port over TCP (an MCP endpoint may answer GET with 405)', () => {
    expect(container.ports).toEqual([{ name: 'mcp', containerPort: 3000, protocol: 'TCP' }]);
    expect(container.readinessProbe?.tcpSocket).toEqual({ port: 'mcp' });
    expect(container.livenessProbe?.tcpSocket).toEqual({ port: 'mcp' });
    expect(container.readinessProbe?.httpGet).toBeUndefined();
  });

  it('exposes the port through the Service and reports the endpoint', () => {
    const svc = render(server, OPTIONS).find((o) => o.kind === 'Service') as V1Service;
    expect(svc.spec?.selector).toEqual({
      'app.kubernetes.io/name': 'mcp-server',
      'app.kubernetes.io/instance': 'everything',
    });
    expect(svc.spec?.ports).toEqual([
      { name: 'mcp', port: 3000, targetPort: 'mcp', protocol: 'TCP', appProtocol: 'http' },
    ]);
    expect(endpointOf(server)).toBe('http://everything.team-a.svc:3000/mcp');
  });

  it('reports spec.url as the endpoint of a url server', () => {
    expect(endpointOf(mcpServer({ url: 'https://mcp.example.com/v2' }))).toBe(
      'https://mcp.example.com/v2',
    );
  });
});

describe('render: Deployment and pod overlay', () => {
  it('selects the pods by the stable labels and keeps few old ReplicaSets', () => {
    const deployment = deploymentOf(stdio());
    expect(deployment.spec?.replicas).toBe(1);
    expect(deployment.spec?.revisionHistoryLimit).toBe(3);
    expect(deployment.spec?.selector).toEqual({
      matchLabels: {
        'app.kubernetes.io/name': 'mcp-server',
        'app.kubernetes.io/instance': 'everything',
      },
    });
    expect(deployment.spec?.template.metadata?.labels).toEqual(LABELS);
  });

  it('sets spec.replicas, including zero', () => {
    expect(deploymentOf(stdio({ replicas: 3 })).spec?.replicas).toBe(3);
    expect(deploymentOf(stdio({ replicas: 0 })).spec?.replicas).toBe(0);
  });

  it('applies the pod overlay', () => {
    const pod = {
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      tolerations: [
        {
          key: 'dedicated',
          operator: 'Equal' as const,
          value: 'mcp',
          effect: 'NoSchedule' as const,
        },
      ],
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 50,
              podAffinityTerm: {
                topologyKey: 'kubernetes.io/hostname',
                labelSelector: { matchLabels: { a: 'b' } },
              },
            },
          ],
        },
      },
      imagePullSecrets: [{ name: 'registry' }],
      labels: { team: 'search' },
      annotations: { 'example.com/owner': 'search' },
    };
    const deployment = deploymentOf(stdio({ pod }));
    const template = deployment.spec?.template;
    expect(template?.spec?.nodeSelector).toEqual(pod.nodeSelector);
    expect(template?.spec?.tolerations).toEqual(pod.tolerations);
    expect(template?.spec?.affinity).toEqual(pod.affinity);
    expect(template?.spec?.imagePullSecrets).toEqual(pod.imagePullSecrets);
    expect(template?.metadata?.labels).toEqual({ ...LABELS, team: 'search' });
    expect(template?.metadata?.annotations?.['example.com/owner']).toBe('search');
    expect(deployment.spec?.selector.matchLabels).not.toHaveProperty('team');
  });

  it('keeps Service environment variables out of the server', () => {
    expect(podSpecOf(stdio()).enableServiceLinks).toBe(false);
  });

  it('passes env and envFrom through and gives the server a writable HOME', () => {
    const env = [
      { name: 'LOG_LEVEL', value: 'debug' },
      { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'weather', key: 'api-key' } } },
    ];
    const envFrom = [{ prefix: 'CFG_', configMapRef: { name: 'weather-config' } }];
    const server = containerOf(podSpecOf(streamableHttp({ env, envFrom })), 'server');
    expect(server.env).toEqual([...env, { name: 'HOME', value: '/tmp' }]);
    expect(server.envFrom).toEqual(envFrom);
    expect(server.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
  });

  it('leaves HOME alone when the user sets it', () => {
    const env = [{ name: 'HOME', value: '/home/app' }];
    expect(containerOf(podSpecOf(stdio({ env })), 'server').env).toEqual(env);
  });
});

describe('render: resources', () => {
  it('gives every container requests and a memory limit by default', () => {
    const pod = podSpecOf(stdio());
    for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
      expect(container.resources?.requests, container.name).toHaveProperty('memory');
      expect(container.resources?.limits, container.name).toHaveProperty('memory');
    }
    expect(containerOf(pod, 'server').resources).toEqual({
      requests: { cpu: '50m', memory: '64Mi' },
      limits: { memory: '512Mi' },
    });
  });

  it('uses spec.resources as given, over the operator default', () => {
    const resources = {
      requests: { cpu: 1, memory: '1Gi' },
      limits: { memory: '2Gi', 'nvidia.com/gpu': 1 },
    };
    const options = { ...OPTIONS, serverResources: { requests: { cpu: '10m' } } };
    expect(containerOf(podSpecOf(stdio({ resources }), options), 'server').resources).toEqual(
      resources,
    );
    expect(containerOf(podSpecOf(stdio(), options), 'server').resources).toEqual({
      requests: { cpu: '10m' },
    });
  });

  it('sizes the bridge from the operator options', () => {
    const bridgeResources = { requests: { cpu: '100m', memory: '128Mi' } };
    expect(
      containerOf(podSpecOf(stdio(), { ...OPTIONS, bridgeResources }), 'bridge').resources,
    ).toEqual(bridgeResources);
  });
});

describe('render: ServiceAccount', () => {
  it('creates one without an API token and runs the pod as it', () => {
    const sa = render(stdio(), OPTIONS).find(
      (o) => o.kind === 'ServiceAccount',
    ) as V1ServiceAccount;
    expect(sa.automountServiceAccountToken).toBe(false);
    const pod = podSpecOf(stdio());
    expect(pod.serviceAccountName).toBe('everything');
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it("uses the user's ServiceAccount as is, and creates none", () => {
    const server = stdio({ pod: { serviceAccountName: 'k8s-reader' } });
    expect(kinds(render(server, OPTIONS))).not.toContain('ServiceAccount/everything');
    const pod = podSpecOf(server);
    expect(pod.serviceAccountName).toBe('k8s-reader');
    expect(pod.automountServiceAccountToken).toBeUndefined();
  });
});
