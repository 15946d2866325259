/**
 * The manifests in examples/ as tests read them, and the real kubectl that users apply them with.
 */
import { spawn } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import type { MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';

export const EXAMPLES_DIR = join(import.meta.dirname, '..', '..', 'examples');

export interface Example {
  file: string;
  server: MCPServer;
}

/** Every object of every examples/*.yaml, by file; each file holds exactly one MCPServer. */
export async function loadExamples(): Promise<Example[]> {
  const files = (await readdir(EXAMPLES_DIR)).filter((f) => f.endsWith('.yaml')).sort();
  return Promise.all(
    files.map(async (file) => {
      const docs = loadAll(await readFile(join(EXAMPLES_DIR, file), 'utf8'));
      if (docs.length !== 1) throw new Error(`${file}: expected one object, found ${docs.length}`);
      return { file, server: docs[0] as MCPServer };
    }),
  );
}

export interface Printed {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl (from PATH) against `kubeconfig`; resolves to what it printed. */
export function kubectl(kubeconfig: string, args: readonly string[], stdin = ''): Promise<Printed> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig } });
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, ...out }));
    child.stdin.end(stdin);
  });
}
