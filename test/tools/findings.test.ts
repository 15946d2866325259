import { describe, expect, it } from 'vitest';
import { formatFindings, keyedTools, toolFindings } from '../../src/tools/findings.ts';

const input = { type: 'object', properties: { q: { type: 'string' } } };

describe('keyedTools', () => {
  it('keeps every entry with a string name, conformant or not, and reports the others by index', () => {
    const entries = [{ name: 'a', inputSchema: input }, { name: 'b' }, null, { title: 'x' }, 'c'];
    expect(keyedTools(entries, 10)).toEqual({
      tools: [{ name: 'a', inputSchema: input }, { name: 'b' }],
      findings: [
        { item: '#12', problem: 'not a tool: no string name' },
        { item: '#13', problem: 'not a tool: no string name' },
        { item: '#14', problem: 'not a tool: no string name' },
      ],
    });
  });
});

describe('toolFindings', () => {
  it('finds nothing in conformant tools', () => {
    expect(toolFindings([{ name: 'a', inputSchema: input }])).toEqual([]);
  });

  it('names each way a tool breaks the MCP Tool schema, in list order', () => {
    expect(
      toolFindings([
        { name: 'untyped', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#' } },
        { name: 'none' },
        { name: 'array', inputSchema: { type: 'array' } },
        { name: 'hint', inputSchema: input, annotations: { readOnlyHint: 'yes' } },
        { name: 'bad name!', inputSchema: input },
        { name: 'untyped', inputSchema: input },
      ]),
    ).toEqual([
      { item: 'untyped', problem: 'inputSchema lacks type: object' },
      { item: 'none', problem: 'no inputSchema' },
      { item: 'array', problem: 'inputSchema lacks type: object' },
      { item: 'hint', problem: '/annotations/readOnlyHint: Expected boolean' },
      { item: 'bad name!', problem: 'name not allowed by the tool-name rules' },
      { item: 'untyped', problem: 'duplicate tool name' },
    ]);
  });

  it('shows a name with control characters as escapes', () => {
    expect(toolFindings([{ name: 'a\u001b[2Jb', inputSchema: input }])[0]?.item).toBe('a\\e[2Jb');
  });
});

describe('formatFindings', () => {
  it('prints nothing for no findings, one line per finding otherwise', () => {
    expect(formatFindings([])).toBe('');
    expect(formatFindings([{ item: 'x', problem: 'inputSchema lacks type: object' }])).toBe(
      'Findings: 1 way the listed tools break the MCP schema (recorded and compared as published):\nFINDING  x  inputSchema lacks type: object\n',
    );
  });
});
