import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { approvedTools, approvedYaml } from '../../src/tools/approve.ts';
import { parseApprovedTools } from '../../src/tools/baseline.ts';
import { computeDrift, isDrifted } from '../../src/tools/drift.ts';
import type { Tool } from '../../src/mcp/schemas.ts';
import { OperatorError } from '../../src/errors.ts';
import { snapshotOf } from './fixtures.ts';

/** Values YAML likes to reinterpret, and text a folded line would change. */
const tricky: Tool = {
  name: 'tricky',
  title: 'yes',
  description: 'Line one.\nLine two: "quoted", #not a comment, trailing space ',
  inputSchema: {
    type: 'object',
    properties: {
      answer: { type: 'string', enum: ['yes', 'no', 'on', 'off', 'null', '1.0', '0x1F', '~'] },
      big: { type: 'number', maximum: 1e21, minimum: -0.000001 },
      unicode: { type: 'string', description: '検索 — émoji 🔍' },
    },
    required: ['answer'],
  },
  annotations: { readOnlyHint: true },
  _meta: { 'example.com/build': 7 },
};

const plain: Tool = { name: 'plain', inputSchema: { type: 'object' } };

describe('approve', () => {
  const tools = snapshotOf(tricky, plain);

  it.each(['digests', 'definitions'] as const)(
    'the %s it writes, read back from YAML, leave no drift',
    (form) => {
      const yaml = approvedYaml(tools, form, 'mcp-operator approve demo/search');
      const manifest = load(yaml) as { spec: { tools: { approved: { tools: unknown } } } };
      const text = JSON.stringify(manifest.spec.tools.approved.tools);
      const baseline = parseApprovedTools(text, 'the test');
      expect(isDrifted(computeDrift(tools, baseline))).toBe(false);
      // The same through YAML text, as a ConfigMap key would hold it.
      const listOnly = yaml.slice(yaml.indexOf('        - '));
      const unindented = listOnly.replace(/^ {8}/gm, '');
      expect(isDrifted(computeDrift(tools, parseApprovedTools(unindented, 'the test')))).toBe(
        false,
      );
    },
  );

  it('writes digests with abbreviated field digests, or definitions without _meta, by name', () => {
    const short = (digest: string | undefined) => digest?.slice(0, 'sha256:'.length + 12);
    const [plainTool, trickyTool] = tools;
    expect(approvedTools(tools, 'digests')).toEqual([
      {
        name: 'plain',
        digest: plainTool!.digest,
        fields: { inputSchema: short(plainTool!.fields.inputSchema) },
      },
      {
        name: 'tricky',
        digest: trickyTool!.digest,
        fields: {
          title: short(trickyTool!.fields.title),
          description: short(trickyTool!.fields.description),
          inputSchema: short(trickyTool!.fields.inputSchema),
          annotations: short(trickyTool!.fields.annotations),
        },
      },
    ]);
    const [, definition] = approvedTools(tools, 'definitions');
    expect(definition?.definition).not.toHaveProperty('_meta');
    expect(definition?.definition).toHaveProperty('description', tricky.description);
  });

  it('starts the YAML with the heading as a comment, from spec: down', () => {
    const yaml = approvedYaml(tools, 'digests', 'approve demo/search\nsnapshot sha256:x');
    expect(
      yaml.startsWith(
        '# approve demo/search\n# snapshot sha256:x\nspec:\n  tools:\n    approved:\n',
      ),
    ).toBe(true);
  });

  it('leaves out a tool whose name the API would refuse, and shows a heading as text', () => {
    const listed = snapshotOf(plain, { ...plain, name: 'evil\u001b[2J' });
    expect(approvedTools(listed, 'digests').map((t) => t.name)).toEqual(['plain']);
    const yaml = approvedYaml(listed, 'definitions', 'server evil\u001b]0;owned\u0007 1.0');
    expect(yaml).not.toMatch(/[^\P{Cc}\n]/u);
    expect(yaml.startsWith('# server evil\\e]0;owned\\a 1.0\nspec:')).toBe(true);
  });

  it('records what ran when the tools were approved', () => {
    const provenance = {
      imageDigests: [`sha256:${'c'.repeat(64)}`],
      serverInfo: { name: 'files', version: '1.0.0' },
    };
    const printed = load(approvedYaml(tools, 'digests', 'files 1.0.0', { provenance })) as {
      spec: { tools: { approved: { provenance: unknown } } };
    };
    expect(printed.spec.tools.approved.provenance).toEqual(provenance);
  });
});

describe('parseApprovedTools', () => {
  const digest = `sha256:${'a'.repeat(64)}`;

  it.each([
    ['not YAML', '{ [', /the approved tools in cm\/tools.yaml are invalid: .*/],
    ['not a list', 'name: x', /invalid: \/: Expected array/],
    [
      'a malformed digest',
      '- {name: x, digest: "md5:1"}',
      /invalid: \/0\/digest: Expected string to match/,
    ],
    [
      'both forms',
      `- {name: x, digest: "${digest}", definition: {inputSchema: {}}}`,
      /\/0 \(x\): set exactly one/,
    ],
    ['neither form', '- {name: x}', /\/0 \(x\): set exactly one/],
    [
      'field digests without a digest',
      '- {name: x, fields: {title: "sha256:0123456789ab"}, definition: {inputSchema: {}}}',
      /\/0 \(x\): fields goes with digest/,
    ],
    [
      'a malformed field digest',
      `- {name: x, digest: "${digest}", fields: {title: "sha256:0123"}}`,
      /invalid: \/0\/fields\/title: Expected string to match/,
    ],
    [
      'a field that is not digested',
      `- {name: x, digest: "${digest}", fields: {icons: "sha256:0123456789ab"}}`,
      /invalid: \/0\/fields\/icons: Unexpected property/,
    ],
    [
      "a name that breaks MCP's tool-name rules",
      `- {name: "has space", digest: "${digest}"}`,
      /invalid: \/0\/name: Expected string to match/,
    ],
    [
      'a name twice',
      `- {name: x, digest: "${digest}"}\n- {name: x, digest: "${digest}"}`,
      /tool x is listed twice/,
    ],
  ])('refuses %s with a message naming the source', (_name, text, message) => {
    const error = (() => {
      try {
        parseApprovedTools(text, 'cm/tools.yaml');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OperatorError);
    expect((error as OperatorError).code).toBe('MCPOP_BASELINE_INVALID');
    expect((error as OperatorError).message).toMatch(message);
  });
});
