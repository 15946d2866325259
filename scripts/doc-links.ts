/**
 * Links that lead nowhere (and prose that reads "undefined", see undefinedText): a relative
 * Markdown link to a file or heading that does not exist,
 * a `docs/adr/NNNN…` reference (in docs or code) to no decision record, or two records with one
 * number. `npm run docs:check` fails on any of them, so moving or splitting a document cannot
 * leave readers at a dead end.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const ADR_DIR = 'docs/adr';

/** Tracked files (and new ones not ignored), as git lists them. */
function projectFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    encoding: 'utf8',
  });
  return out.split('\n').filter((file) => file !== '' && existsSync(file));
}

/**
 * GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped,
 * spaces made hyphens; a repeated heading gets `-1`, `-2`, ….
 */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}

/** Relative link targets of a Markdown text, outside code. */
function markdownLinks(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function deadMarkdownLinks(file: string, cache: Map<string, Set<string>>): string[] {
  const dead: string[] = [];
  for (const target of markdownLinks(readFileSync(file, 'utf8'))) {
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = path === '' ? file : normalize(join(dirname(file), decodeURI(path)));
    if (!existsSync(resolved)) {
      dead.push(`${file}: ${target} does not exist`);
      continue;
    }
    if (anchor === undefined || !resolved.endsWith('.md') || statSync(resolved).isDirectory())
      continue;
    if (!cache.has(resolved)) cache.set(resolved, anchors(readFileSync(resolved, 'utf8')));
    if (!cache.get(resolved)!.has(anchor)) dead.push(`${file}: ${target} has no such heading`);
  }
  return dead;
}

/** A decision record named by its path in any text: its number, with or without the rest of its name. */
function deadAdrReferences(file: string, records: readonly string[]): string[] {
  const dead: string[] = [];
  for (const match of readFileSync(file, 'utf8').matchAll(/docs\/adr\/(\d{4})([a-z0-9-]*\.md)?/g)) {
    const [reference, number, rest] = match as unknown as [string, string, string | undefined];
    const known =
      rest === undefined
        ? records.some((record) => record.startsWith(`${number}-`))
        : records.includes(`${number}${rest}`);
    if (!known) dead.push(`${file}: ${reference} names no decision record`);
  }
  return dead;
}

function duplicateNumbers(records: readonly string[]): string[] {
  const byNumber = Map.groupBy(records, (record) => record.slice(0, 4));
  return [...byNumber]
    .filter(([, named]) => named.length > 1)
    .map(([number, named]) => `${ADR_DIR}: ${named.join(' and ')} share the number ${number}`);
}

/**
 * A generator that printed a missing value: the word `undefined` in the prose of a Markdown
 * file (outside code, where it may be JavaScript). No document means it.
 */
function undefinedText(file: string): string[] {
  const prose = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, ''))
    .replace(/`[^`\n]*`/g, '');
  return prose
    .split('\n')
    .flatMap((line, i) =>
      /\bundefined\b/.test(line) ? [`${file}:${i + 1}: reads "undefined"`] : [],
    );
}

/** Every dead link of the project, as lines to print; empty when there is none. */
export function deadLinks(): string[] {
  const files = projectFiles();
  const records = readdirSync(ADR_DIR).filter((name) => /^\d{4}-.*\.md$/.test(name));
  const cache = new Map<string, Set<string>>();
  return [
    ...files.filter((f) => f.endsWith('.md')).flatMap((f) => deadMarkdownLinks(f, cache)),
    ...files.filter((f) => f.endsWith('.md')).flatMap(undefinedText),
    ...files
      // The changelog names the paths that were, by design.
      .filter((f) => /\.(md|ts|js|sh|ya?ml)$/.test(f) && f !== 'CHANGELOG.md')
      .flatMap((f) => deadAdrReferences(f, records)),
    ...duplicateNumbers(records),
  ];
}
