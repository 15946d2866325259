/**
 * Findings: the ways a listed tool breaks the MCP schema. Discovery is lenient in what it
 * accepts and strict in what it reports: a tool whose definition is wrong is still recorded
 * (its name, digests and raw definition), because drift must see what the server publishes,
 * and each violation is kept here beside it. Real servers publish such tools: a
 * server-filesystem release that resolves zod 4 lists every inputSchema as
 * `{"$schema": "…draft-07…"}` with no `type` at all.
 *
 * Only an entry that cannot be keyed (not an object, or without a string name) is left out of
 * the snapshot, and it too is a finding. Pure functions; the order of findings is the order of
 * the list, so the same answer always gives the same findings.
 */

import { TOOL_NAME_PATTERN } from '../tool-record.ts';
import { ToolSchema, checker } from '../mcp/schemas.ts';
import { NAME_MAX, shown, visible } from './text.ts';

export interface Finding {
  /** The item as listed (its name), or `#<index>` for an entry without a usable name. */
  item: string;
  problem: string;
}

/** A listed entry that can be recorded: an object with a string name. */
export type ListedTool = { name: string } & Record<string, unknown>;

const TOOL = checker(ToolSchema);
const TOOL_NAME = new RegExp(TOOL_NAME_PATTERN);

/** Characters of a schema path a finding shows. */
const PATH_SHOWN = 120;

/**
 * Splits a tools/list page into the tools that can be recorded and findings for the entries
 * that cannot; `offset` is the index of the page's first entry in the whole list.
 */
export function keyedTools(
  entries: readonly unknown[],
  offset: number,
): { tools: ListedTool[]; findings: Finding[] } {
  const tools: ListedTool[] = [];
  const findings: Finding[] = [];
  entries.forEach((entry, i) => {
    if (isNamed(entry)) tools.push(entry);
    else findings.push({ item: `#${offset + i}`, problem: 'not a tool: no string name' });
  });
  return { tools, findings };
}

/**
 * Every way the listed tools break the MCP schema (2025-11-25 / 2026-07-28 `Tool`, and
 * server/tools "Tool Names"): one finding per tool and problem, in list order.
 */
export function toolFindings(tools: readonly ListedTool[]): Finding[] {
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const tool of tools) {
    const item = shown(tool.name, NAME_MAX);
    if (seen.has(tool.name)) findings.push({ item, problem: 'duplicate tool name' });
    seen.add(tool.name);
    if (!TOOL_NAME.test(tool.name)) {
      findings.push({ item, problem: 'name not allowed by the tool-name rules' });
    }
    const problem = schemaProblem(tool);
    if (problem !== undefined) findings.push({ item, problem });
  }
  return findings;
}

/** The first way the tool breaks the `Tool` schema, said as a person would. */
function schemaProblem(tool: ListedTool): string | undefined {
  if (TOOL.check(tool)) return undefined;
  const input = tool.inputSchema;
  if (input === undefined) return 'no inputSchema';
  if (!isObject(input) || input.type !== 'object') return 'inputSchema lacks type: object';
  const { path, message } = TOOL.firstError(tool);
  return `${shown(path, PATH_SHOWN)}: ${message}`;
}

function isNamed(entry: unknown): entry is ListedTool {
  return isObject(entry) && typeof entry.name === 'string';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Findings as `mcp-operator diff` prints them, control characters made visible; empty without. */
export function formatFindings(findings: readonly Finding[]): string {
  if (findings.length === 0) return '';
  const lines = [
    `Findings: ${findings.length} ${findings.length === 1 ? 'way' : 'ways'} the listed tools break the MCP schema (recorded and compared as published):`,
    ...findings.map(({ item, problem }) => `FINDING  ${item}  ${problem}`),
  ];
  return `${lines.map(visible).join('\n')}\n`;
}
