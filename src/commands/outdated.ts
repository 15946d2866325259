/**
 * `mcp-operator outdated [-n ns | -A]`: the imported MCPServers whose registry has a newer
 * version than the one they are pinned to, as `npm outdated` lists packages. "Newer" is what the
 * registry marks as its latest. Exit code 0: none is outdated, 1: some are, 2: an error (a
 * registry that could not be asked counts, since "none" would not be known).
 */

import { parseArgs } from 'node:util';
import { LIST_KIND } from '../api/names.ts';
import { type RegistryProvenance, registryProvenance } from '../api/registry-provenance.ts';
import { MCP_SERVER, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { collectionPath } from '../kube/resources.ts';
import { RegistryClient, type ReadLimits } from '../registry/client.ts';
import { visible } from '../tools/text.ts';
import {
  KUBE_OPTIONS,
  PROGRAM,
  REGISTRY_OPTIONS,
  UsageError,
  kubeTarget,
  outputOf,
  printed,
  registryChoice,
  registryCommand,
} from './registry-cli.ts';

const USAGE = `Usage: ${PROGRAM} outdated [-n namespace | -A] [--registry URL] [-o json|yaml]

Lists the MCPServers imported from an MCP registry whose registry has a newer version than
the one they run. Each is asked of the registry it was imported from (--registry: of that
one instead). \`${PROGRAM} import NAME@VERSION --apply\` moves a pin. Exit code 0: none is
outdated, 1: some are, 2: an error.
`;

/** Registry lookups at once: one command line must not become a flood of requests. */
const LOOKUPS_AT_ONCE = 4;

export interface OutdatedRow {
  namespace: string;
  name: string;
  registry: string;
  server: string;
  current: string;
  latest: string | undefined;
  /** Why the latest version is unknown. */
  error: string | undefined;
}

export const outdatedCommand = registryCommand('outdated', USAGE, async (argv) => {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      ...KUBE_OPTIONS,
      ...REGISTRY_OPTIONS,
      'all-namespaces': { type: 'boolean', short: 'A' },
    },
    allowPositionals: true,
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError('takes no arguments');
  const output = outputOf(values.output);
  const { limits } = registryChoice(values);
  const { client, namespace, failure } = await kubeTarget(values);
  let servers: StoredMCPServer[];
  try {
    const list = await client.request<{ kind?: string; items: StoredMCPServer[] }>({
      method: 'GET',
      path: collectionPath(MCP_SERVER, values['all-namespaces'] === true ? undefined : namespace),
    });
    if (list.kind !== undefined && list.kind !== LIST_KIND)
      throw new Error(`expected an ${LIST_KIND}, got ${list.kind}`);
    servers = list.items;
  } catch (error) {
    throw failure(error);
  } finally {
    client.close();
  }
  const rows = await lookUp(servers, values.registry, limits);
  if (output !== undefined) process.stdout.write(printed(rows, output));
  else process.stdout.write(table(rows));
  if (rows.some((row) => row.error !== undefined)) return 2;
  return rows.some((row) => row.latest !== undefined && row.latest !== row.current) ? 1 : 0;
});

/** The imported servers with their registry's latest version; each name asked once. */
async function lookUp(
  servers: readonly StoredMCPServer[],
  override: string | undefined,
  limits: ReadLimits,
): Promise<OutdatedRow[]> {
  const imported = servers.flatMap((server) => {
    const provenance = registryProvenance(server.metadata.annotations);
    return provenance === undefined ? [] : [{ server, provenance }];
  });
  const answers = new Map<string, Promise<{ latest?: string; error?: string }>>();
  const queue: (() => Promise<void>)[] = [];
  const ask = (registry: string, provenance: RegistryProvenance) => {
    const key = `${registry} ${provenance.name}`;
    let answer = answers.get(key);
    if (answer === undefined) {
      answer = new Promise((resolve) => {
        queue.push(async () => {
          try {
            const found = await new RegistryClient(registry, limits).entry({
              name: provenance.name,
              version: undefined,
            });
            resolve({ latest: found.entry.version });
          } catch (error) {
            resolve({ error: (error as Error).message });
          }
        });
      });
      answers.set(key, answer);
    }
    return answer;
  };
  const pending = imported.map(async ({ server, provenance }): Promise<OutdatedRow> => {
    const registry = override ?? provenance.registry;
    const row = {
      namespace: server.metadata.namespace,
      name: server.metadata.name,
      registry: registry ?? '',
      server: provenance.name,
      current: provenance.version,
    };
    if (registry === undefined)
      return {
        ...row,
        latest: undefined,
        error: 'imported from a file or URL: no registry to ask (give --registry)',
      };
    const answer = await ask(registry, provenance);
    return { ...row, latest: answer.latest, error: answer.error };
  });
  await Promise.all(
    Array.from({ length: LOOKUPS_AT_ONCE }, async () => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) await job();
    }),
  );
  return Promise.all(pending);
}

/** The rows as `kubectl get` prints a table, then one line per failed lookup. */
function table(rows: readonly OutdatedRow[]): string {
  if (rows.length === 0) return 'No imported MCPServers found.\n';
  const header = ['NAMESPACE', 'NAME', 'SERVER', 'CURRENT', 'LATEST'];
  const cells = rows.map((row) =>
    [row.namespace, row.name, row.server, row.current, row.latest ?? '?'].map((cell) =>
      visible(cell),
    ),
  );
  const widths = header.map((title, i) =>
    Math.max(title.length, ...cells.map((c) => c[i]!.length)),
  );
  const line = (cols: string[]) =>
    `${cols
      .map((c, i) => c.padEnd(widths[i]!))
      .join('   ')
      .trimEnd()}\n`;
  const moves = rows
    .filter((row) => row.latest !== undefined && row.latest !== row.current)
    .map(
      (row) =>
        `  ${PROGRAM} import ${row.server}@${row.latest} --name ${row.name} -n ${row.namespace} --registry ${row.registry} --apply\n`,
    );
  const errors = rows
    .filter((row) => row.error !== undefined)
    .map((row) => `${row.namespace}/${row.name}: ${row.error}\n`);
  return [
    line(header),
    ...cells.map(line),
    ...(moves.length === 0
      ? []
      : [
          '\nTo move a pin (with the same inputs as the first import):\n',
          ...moves.map((m) => visible(m)),
        ]),
    ...errors.map((e) => visible(e)),
  ].join('');
}
