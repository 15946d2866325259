import type { V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { toolDigest } from '../../../src/tools/digest.ts';
import { itemDigest } from '../../../src/tools/catalog-items.ts';
import { POLICY_KEY } from '../../../src/controller/render/policy.ts';
import { render } from '../../../src/controller/render/render.ts';
import type { Resolved } from '../../../src/controller/render/options.ts';
import { resolveBaseline } from '../../../src/tools/baseline.ts';
import type { StoredMCPServer } from '../../../src/api/v1alpha1/stored.ts';
import type { MCPServerSpec } from '../../../src/api/v1alpha1/mcpserver.ts';
import { OPTIONS, containerOf, flag, kinds, podSpecOf, stdio } from './fixtures.ts';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const echo = {
  description: 'Echoes the message back',
  inputSchema: {
    type: 'object',
    properties: { message: { type: 'string' } },
    required: ['message'],
  },
};

const enforce = (tools: Partial<NonNullable<MCPServerSpec['tools']>>) =>
  stdio({ tools: { driftPolicy: 'Enforce', ...tools } });

/** What render makes of `server` with its baseline resolved as the controller resolves it. */
function rendered(server: StoredMCPServer, resolved: Resolved = {}): ReturnType<typeof render> {
  return render(server, OPTIONS, {
    baseline: resolveBaseline(server.spec.tools?.approved),
    ...resolved,
  });
}

function policyOf(objects: ReturnType<typeof render>): unknown {
  const cm = objects.find((o): o is V1ConfigMap => o.kind === 'ConfigMap');
  return cm === undefined ? undefined : JSON.parse(cm.data?.[POLICY_KEY] ?? '');
}

describe('render: enforcement policy', () => {
  it('renders no policy under Warn', () => {
    const server = stdio({
      tools: { driftPolicy: 'Warn', approved: { tools: [{ name: 'a', digest: DIGEST }] } },
    });
    expect(kinds(render(server, OPTIONS))).not.toContain('ConfigMap/everything-policy');
    const bridge = containerOf(podSpecOf(server), 'bridge');
    expect(flag(bridge.command, '--policy-file')).toBeUndefined();
  });

  it('lists the approved tools by digest, computing it for full definitions, with the allowlist', () => {
    const server = enforce({
      allow: ['echo'],
      approved: {
        tools: [
          { name: 'echo', definition: echo },
          { name: 'add', digest: DIGEST },
        ],
      },
    });
    expect(policyOf(rendered(server))).toEqual({
      approved: [
        { name: 'add', digest: DIGEST },
        { name: 'echo', digest: toolDigest({ name: 'echo', ...echo }) },
      ],
      allow: ['echo'],
    });
  });

  it('lists the approved prompts, resources and templates by digest, and leaves out kinds not approved', () => {
    const prompt = { description: 'Greets', arguments: [{ name: 'who', required: true }] };
    const server = enforce({
      approved: {
        tools: [],
        prompts: [
          { name: 'greet', definition: prompt },
          { name: 'farewell', digest: DIGEST },
        ],
        resourceTemplates: [{ uriTemplate: 'demo://t/{id}', digest: DIGEST }],
      },
    });
    // The digest the bridge compares with what the server lists, computed as discovery does.
    const greet = itemDigest('prompts', { name: 'greet', ...prompt });
    expect(policyOf(rendered(server))).toEqual({
      approved: [],
      prompts: [
        { name: 'farewell', digest: DIGEST },
        { name: 'greet', digest: greet },
      ],
      resourceTemplates: [{ uriTemplate: 'demo://t/{id}', digest: DIGEST }],
    });
  });

  it('takes the tools of a referenced ConfigMap from the caller, and approves nothing without them', () => {
    const server = enforce({ approved: { configMapRef: { name: 'baseline', key: 'tools.yaml' } } });
    const resolved: Resolved = {
      baseline: { kind: 'tools', tools: [{ name: 'add', digest: DIGEST }] },
    };
    expect(policyOf(render(server, OPTIONS, resolved))).toEqual({
      approved: [{ name: 'add', digest: DIGEST }],
    });
    expect(policyOf(render(server, OPTIONS))).toEqual({ approved: [] });
  });

  it('mounts the policy into the bridge, and the bridge alone', () => {
    const pod = podSpecOf(enforce({ approved: { tools: [] } }));
    const bridge = containerOf(pod, 'bridge');
    const volume = pod.volumes?.find((v) => v.configMap?.name === 'everything-policy');
    const mount = bridge.volumeMounts?.find((m) => m.name === volume?.name);
    expect(volume?.configMap?.items).toEqual([{ key: POLICY_KEY, path: POLICY_KEY }]);
    expect(mount?.readOnly).toBe(true);
    expect(flag(bridge.command, '--policy-file')).toBe(`${mount?.mountPath}/${POLICY_KEY}`);
    expect(containerOf(pod, 'server').volumeMounts?.map((m) => m.name)).not.toContain(volume?.name);
  });

  it('mounts the discovery token Secret into the bridge alone, and passes its file, under either policy', () => {
    const pod = podSpecOf(enforce({ approved: { tools: [] } }));
    const bridge = containerOf(pod, 'bridge');
    const volume = pod.volumes?.find((v) => v.secret?.secretName === 'everything-discovery');
    const mount = bridge.volumeMounts?.find((m) => m.name === volume?.name);
    expect(volume?.secret?.items).toEqual([{ key: 'token', path: 'token' }]);
    expect(mount?.readOnly).toBe(true);
    expect(flag(bridge.command, '--discovery-token-file')).toBe(`${mount?.mountPath}/token`);
    expect(containerOf(pod, 'server').volumeMounts?.map((m) => m.name)).not.toContain(volume?.name);
    // Not rendered: the controller creates it, with a random token render cannot make.
    expect(kinds(render(enforce({ approved: { tools: [] } }), OPTIONS))).not.toContain(
      'Secret/everything-discovery',
    );
    // Under Warn too: discovery long-polls the bridge's change feed with it. No policy, though.
    const warn = containerOf(podSpecOf(stdio({ tools: { driftPolicy: 'Warn' } })), 'bridge');
    expect(flag(warn.command, '--discovery-token-file')).toBe(`${mount?.mountPath}/token`);
    expect(flag(warn.command, '--policy-file')).toBeUndefined();
  });

  it('does not roll the pods when only the approved set changes (the bridge reloads it)', () => {
    const before = podSpecOf(enforce({ approved: { tools: [{ name: 'a', digest: DIGEST }] } }));
    const after = podSpecOf(enforce({ approved: { tools: [{ name: 'b', definition: echo }] } }));
    expect(after).toEqual(before);
  });
});
