/**
 * A local package index in front of PyPI, for `uvx <project>` runs that must resolve a release
 * the test chooses: one project is served with only its releases up to the newest the test
 * picks, and the test moves that, as when its author publishes a new release; every other
 * project is passed through as PyPI lists it. It speaks the JSON form of the simple repository
 * API (PEP 691, which uv asks for) and rewrites every file URL to itself, so that uv sends all
 * its traffic to loopback and only this index reaches PyPI.
 */

import { relayed, serveLocally, type Answer } from './upstream.ts';

const UPSTREAM = 'https://pypi.org/simple/';
const FILES = 'https://files.pythonhosted.org/';
const FILES_PATH = '/files/';
const SIMPLE_JSON = 'application/vnd.pypi.simple.v1+json';

export interface LocalIndex {
  /** `http://127.0.0.1:<port>/simple/`, for `UV_DEFAULT_INDEX`. */
  url: string;
  /** The release `uvx <project>` resolves from now on: newer ones are not listed. */
  newest: string;
  close(): Promise<void>;
}

interface ProjectPage {
  versions?: string[];
  files: { filename: string; url: string }[];
}

/** PEP 503's normalized name: how the index compares project names. */
const normalize = (name: string): string => name.toLowerCase().replace(/[-_.]+/g, '-');

/**
 * `releases` in the order they were published; the project is served with those up to
 * `newest`.
 */
export async function startIndex(
  project: string,
  releases: readonly string[],
  newest: string,
): Promise<LocalIndex> {
  const index: LocalIndex = { url: '', newest, close: () => Promise.resolve() };
  const served = (): string[] => releases.slice(0, releases.indexOf(index.newest) + 1);
  const prefix = new RegExp(`^${project.split(/[-_.]+/).join('[-_.]+')}-`, 'i');
  const versionOf = (filename: string) =>
    filename.replace(prefix, '').split(/-|\.tar\.gz$|\.zip$/)[0] ?? '';

  const server = await serveLocally('PyPI', (req) => {
    const path = req.url ?? '/';
    if (path.startsWith(FILES_PATH)) return relayed(`${FILES}${path.slice(FILES_PATH.length)}`);
    if (path.startsWith('/simple/')) return page(path.slice('/simple/'.length).replace(/\/$/, ''));
    return Promise.resolve({ status: 404, type: 'text/plain', body: Buffer.from('not here\n') });
  });

  /** A project's page from PyPI, the chosen project's cut to the releases served. */
  async function page(name: string): Promise<Answer> {
    const response = await fetch(`${UPSTREAM}${name}/`, { headers: { accept: SIMPLE_JSON } });
    if (!response.ok) return { status: response.status, type: 'text/plain', body: Buffer.from('') };
    const upstream = (await response.json()) as ProjectPage;
    const kept = served();
    const chosen =
      normalize(name) === normalize(project)
        ? {
            ...upstream,
            versions: kept,
            files: upstream.files.filter((file) => kept.includes(versionOf(file.filename))),
          }
        : upstream;
    const files = chosen.files.map((file) => ({ ...file, url: local(file.url, server.origin) }));
    return {
      status: 200,
      type: SIMPLE_JSON,
      body: Buffer.from(JSON.stringify({ ...chosen, files })),
    };
  }

  index.close = server.close;
  index.url = `${server.origin}/simple/`;
  return index;
}

/** A file URL on PyPI's file host as the same file through this index. */
function local(url: string, origin: string): string {
  const absolute = new URL(url, UPSTREAM).href;
  if (!absolute.startsWith(FILES)) throw new Error(`PyPI listed a file elsewhere: ${absolute}`);
  return `${origin}${FILES_PATH}${absolute.slice(FILES.length)}`;
}
