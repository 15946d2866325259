/**
 * `mcp-operator import <server.json | URL | NAME[@VERSION]>`: an MCPServer from an MCP Registry
 * entry, printed (for GitOps) or applied with --apply. The mapping is src/registry/mapping.ts;
 * here are the flags, the reading, and the apply: server-side apply under a field manager of
 * its own, so that importing a newer version moves the pin and leaves the approved baseline
 * (another manager's field) alone, and drift then shows what the new version changed.
 */

import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KIND } from '../api/names.ts';
import { REGISTRY_NAME_ANNOTATION, registryProvenance } from '../api/registry-provenance.ts';
import { MCP_SERVER, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { operatorError } from '../errors.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { SECRET, objectPath } from '../kube/resources.ts';
import {
  RegistryClient,
  entryFromFile,
  entryFromUrl,
  parseReference,
  type ReadLimits,
} from '../registry/client.ts';
import type { GivenInputs } from '../registry/inputs.ts';
import {
  type EntryOrigin,
  type ImportChoices,
  type ImportPlan,
  planImport,
} from '../registry/mapping.ts';
import type { ServerJson } from '../registry/server-json.ts';
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

/** The field manager of imports: what `import --apply` sets, it owns and may change again. */
export const IMPORT_FIELD_MANAGER = 'mcp-operator-import';

const USAGE = `Usage: ${PROGRAM} import <server.json | URL | NAME[@VERSION]> [flags]

Makes an MCPServer from an MCP Registry entry (server.json) and prints it (YAML, or JSON with
-o json), or applies it with --apply. NAME[@VERSION] is looked up in --registry (default the
official registry); without @VERSION, its latest version. Importing a newer version of a
server already imported moves its pin; the approved tools stay, and drift shows what changed.

  --registry URL        the registry's API root (default https://registry.modelcontextprotocol.io)
  --package P           the package to run: npm, pypi, oci, an identifier, or remote
  --name NAME           the MCPServer's name (default: from the registry name)
  -n, --namespace NS    its namespace (default: the context's)
  --image IMAGE         the image that runs npx or uvx (default node:24-bookworm-slim, or uv's)
  --command ARG         what an OCI image runs for stdio, one argv entry per flag
  --env NAME=VALUE      an environment variable the entry declares (repeatable)
  --arg NAME=VALUE      an argument, by its valueHint (positional) or flag (named), or a
                        {variable}; repeatable, in order, for a repeated argument
  --header NAME=VALUE   a header of a remote
  --secret SECRET       the Secret holding the secret inputs, one key per variable name
                        (a remote's bearer token: key token)
  --apply               apply it (server-side apply) instead of printing it
  --timeout 10s         how long to wait for the registry
  -o yaml|json          what to print
  --context, --kubeconfig   as kubectl
`;

const OPTIONS = {
  ...KUBE_OPTIONS,
  ...REGISTRY_OPTIONS,
  package: { type: 'string' },
  name: { type: 'string' },
  image: { type: 'string' },
  command: { type: 'string', multiple: true },
  env: { type: 'string', multiple: true },
  arg: { type: 'string', multiple: true },
  header: { type: 'string', multiple: true },
  secret: { type: 'string' },
  apply: { type: 'boolean' },
} as const;

/** `NAME=VALUE` flags by name, values in the order given. */
function pairs(flag: string, given: readonly string[] | undefined): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const item of given ?? []) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} takes NAME=VALUE, not ${JSON.stringify(item)}`);
    const name = item.slice(0, eq);
    map.set(name, [...(map.get(name) ?? []), item.slice(eq + 1)]);
  }
  return map;
}

/** Where the argument says to read the entry from, and what to record about it. */
async function readEntry(
  source: string,
  root: string,
  limits: ReadLimits,
): Promise<{ entry: ServerJson; origin: EntryOrigin }> {
  if (/^https?:\/\//i.test(source))
    return { entry: await entryFromUrl(source, limits), origin: { registry: undefined, source } };
  if (
    source.endsWith('.json') ||
    source.startsWith('.') ||
    source.startsWith('/') ||
    existsSync(source)
  )
    return { entry: await entryFromFile(source, limits), origin: { registry: undefined, source } };
  const reference = parseReference(source);
  const registry = new RegistryClient(root, limits);
  const found = await registry.entry(reference);
  return {
    entry: found.entry,
    origin: { registry: registry.root, source: `${registry.root} (${source})` },
  };
}

export const importCommand = registryCommand('import', USAGE, async (argv) => {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError('give one server.json file, URL or NAME[@VERSION]');
  const output = outputOf(values.output) ?? 'yaml';
  const inputs: GivenInputs = {
    env: pairs('--env', values.env),
    args: pairs('--arg', values.arg),
    headers: pairs('--header', values.header),
  };
  const choices = (namespace: string | undefined): ImportChoices => ({
    name: values.name,
    namespace,
    package: values.package,
    image: values.image,
    command: values.command,
    secret: values.secret,
    inputs,
  });
  const { root, limits } = registryChoice(values);
  const { entry, origin } = await readEntry(positionals[0]!, root, limits);
  if (values.apply !== true) {
    const plan = planImport(entry, origin, choices(values.namespace));
    // YAML keeps the heading as comments (for the file a GitOps repository commits); JSON has
    // no comments, so there it goes to stderr.
    if (output === 'json') process.stderr.write(heading(plan, origin));
    process.stdout.write(
      `${output === 'json' ? '' : heading(plan, origin)}${printed(plan.server, output)}`,
    );
    return 0;
  }
  const { client, namespace, failure } = await kubeTarget(values);
  try {
    const plan = planImport(entry, origin, choices(namespace));
    await checkSecret(client, namespace, plan);
    const previous = await applyImport(client, namespace, plan);
    const { name } = plan.server.metadata as { name: string };
    const moved =
      previous === undefined || previous === entry.version
        ? ''
        : ` (was ${previous}: drift shows what changed once it is discovered)`;
    process.stdout.write(
      `${KIND} ${namespace}/${name}: ${entry.name} ${entry.version}, ${plan.chosen}${moved}.\n${plan.notes.map((n) => `note: ${n}\n`).join('')}`,
    );
    return 0;
  } catch (error) {
    throw failure(error);
  } finally {
    client.close();
  }
});

/** Comment lines before the printed object: where it came from, what to create, notes. */
function heading(plan: ImportPlan, origin: EntryOrigin): string {
  const lines = [
    `${PROGRAM} import: from ${origin.source}, ${plan.chosen}`,
    ...(plan.secret === undefined
      ? []
      : [
          `it reads Secret ${plan.secret.name} (keys ${plan.secret.keys.join(', ')}): kubectl create secret generic ${plan.secret.name} ${plan.secret.keys.map((k) => `--from-literal=${k}=…`).join(' ')}`,
        ]),
    ...plan.notes.map((note) => `note: ${note}`),
  ];
  return lines.map((line) => `# ${line}\n`).join('');
}

/**
 * The Secret the server reads must exist with every key, or nothing is applied: a pod that
 * cannot start for a missing key says so only in its events. A user who may not read Secrets
 * gets a note instead.
 */
async function checkSecret(client: KubeClient, namespace: string, plan: ImportPlan): Promise<void> {
  if (plan.secret === undefined) return;
  const { name, keys } = plan.secret;
  let data: Record<string, string> = {};
  try {
    const secret = await client.request<{ data?: Record<string, string> }>({
      method: 'GET',
      path: objectPath(SECRET, namespace, name),
    });
    data = secret.data ?? {};
  } catch (error) {
    if (isNotFound(error))
      throw operatorError(
        'MCPOP_IMPORT_MISSING_INPUTS',
        `${KIND} ${namespace}/${String(plan.server.metadata.name)}`,
        `  - Secret ${namespace}/${name} does not exist: kubectl create secret generic ${name} -n ${namespace} ${keys.map((k) => `--from-literal=${k}=…`).join(' ')}`,
      );
    if ((error as { status?: number }).status === 403) {
      plan.notes.push(
        `cannot read Secret ${name} to check its keys (${keys.join(', ')}): make sure it holds them`,
      );
      return;
    }
    throw error;
  }
  const absent = keys.filter((key) => data[key] === undefined);
  if (absent.length > 0)
    throw operatorError(
      'MCPOP_IMPORT_MISSING_INPUTS',
      `${KIND} ${namespace}/${String(plan.server.metadata.name)}`,
      absent.map((key) => `  - key ${key} in Secret ${namespace}/${name}`).join('\n'),
    );
}

/**
 * Server-side apply of the MCPServer. An MCPServer of that name that was not imported from the
 * same registry name is left alone: the import would replace someone else's server. Returns
 * the version the server was at, when it was imported before.
 */
async function applyImport(
  client: KubeClient,
  namespace: string,
  plan: ImportPlan,
): Promise<string | undefined> {
  const name = String(plan.server.metadata.name);
  const path = objectPath(MCP_SERVER, namespace, name);
  const wanted = plan.server.metadata.annotations?.[REGISTRY_NAME_ANNOTATION];
  let previous: string | undefined;
  try {
    const existing = await client.request<StoredMCPServer>({ method: 'GET', path });
    const annotations = existing.metadata.annotations ?? {};
    if (annotations[REGISTRY_NAME_ANNOTATION] !== wanted)
      throw operatorError(
        'MCPOP_IMPORT_NO_PACKAGE',
        String(wanted),
        `${KIND} ${namespace}/${name} exists and was not imported from it; choose another --name`,
      );
    previous = registryProvenance(annotations)?.version;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  await client.request({
    method: 'PATCH',
    patchType: 'apply',
    path,
    query: { fieldManager: IMPORT_FIELD_MANAGER, force: true },
    body: plan.server,
  });
  return previous;
}
