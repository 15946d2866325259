/**
 * Docs that agree with the product and with one another: statements a reader acts on, checked
 * against the code they describe (the generated references are checked by `npm run docs:check`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConditionType } from '../../src/api/v1alpha1/conditions.ts';

const REPO = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const DOCS = [
  'README.md',
  'charts/mcp-operator/README.md',
  'charts/mcp-operator/values.schema.json',
  'charts/mcp-operator/templates/NOTES.txt',
  ...readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('the docs', () => {
  it('name every condition where they list them', () => {
    const readme = read('README.md');
    const troubleshooting = read('docs/troubleshooting.md');
    for (const type of Object.values(ConditionType)) {
      expect(readme, `README.md: ${type}`).toMatch(
        new RegExp(`\\*\\*Conditions\\*\\*:[^\\n]*\`${type}\``),
      );
      expect(troubleshooting, `troubleshooting.md: ${type}`).toMatch(
        new RegExp(`^## \`${type}\``, 'm'),
      );
    }
  });

  it('list every example in the README', () => {
    const readme = read('README.md');
    for (const file of readdirSync(join(REPO, 'examples')).filter((f) => f.endsWith('.yaml')))
      expect(readme).toContain(`(examples/${file})`);
  });

  it('call the metrics Service by its one name', () => {
    const template = read('charts/mcp-operator/templates/service.yaml');
    expect(template).toContain('name: {{ include "mcp-operator.fullname" . }}-metrics');
    for (const doc of DOCS) {
      const names = read(doc).match(/[\w<>.-]*-metrics(?=`| |"|\))/g) ?? [];
      for (const name of names.filter((n) => !n.startsWith('metrics')))
        expect(['<fullname>-metrics', 'mcp-operator-metrics'], `${doc}: ${name}`).toContain(name);
    }
  });

  it('say nothing the product has outgrown', () => {
    for (const doc of DOCS) {
      const text = read(doc);
      expect(text, doc).not.toMatch(/does not record provenance yet/);
      expect(text, doc).not.toMatch(
        /stdio-only bridge|bridge is stdio-only|every stdio (MCP server pod|MCPServer)/,
      );
      expect(text, doc).not.toMatch(/npx mcp-operator/);
    }
  });

  it('give every command of the chart notes its namespace', () => {
    const notes = read('charts/mcp-operator/templates/NOTES.txt');
    for (const line of notes
      .split('\n')
      .filter((l) => /kubectl (describe|get) mcps (?!-A)/.test(l)))
      expect(line).toMatch(/ -n /);
  });
});
