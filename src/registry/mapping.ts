/**
 * A server.json entry → an MCPServer, pure. The one place that decides how a registry entry
 * runs on the cluster:
 *
 * - a package is chosen (npm, then PyPI, then OCI, then a remote; `--package` picks another):
 *   npm runs as `npx -y <name>@<version>`, PyPI as `uvx <name>@<version>` (uv's exact-version
 *   form), OCI as the image itself, pinned by digest when the entry gives one; a remote becomes
 *   a `url` server;
 * - the version must be one exact release (./pins.ts), or the import stops and says why;
 * - each declared input is resolved (./inputs.ts): a secret environment variable becomes a
 *   `secretKeyRef` into the Secret the user names, never a value in the spec; arguments keep
 *   the entry's order (runtime arguments before the package, package arguments after);
 * - anything required and not given stops the import, with the whole list;
 * - the MCPServer is annotated with where it came from (src/api/registry-provenance.ts).
 */

import { API_VERSION, DEFAULTS, type MCPServer } from '../api/v1alpha1/mcpserver.ts';
import { KIND } from '../api/names.ts';
import { type RegistryProvenance, provenanceAnnotations } from '../api/registry-provenance.ts';
import { operatorError } from '../errors.ts';
import { type GivenInputs, InputLedger, describe, resolveInput } from './inputs.ts';
import { imagePinProblem, npmPinProblem, parseImage, pypiPinProblem } from './pins.ts';
import type {
  Argument,
  KeyValueInput,
  Package,
  RemoteTransport,
  ServerJson,
} from './server-json.ts';

/** The images that run a launcher when the user names none: those the project's examples use. */
export const LAUNCHER_IMAGES = {
  npm: 'node:24-bookworm-slim',
  pypi: 'ghcr.io/astral-sh/uv:python3.11-bookworm-slim',
} as const;

/** Package types this operator can run, in the order one is chosen. */
export const RUNNABLE_TYPES = ['npm', 'pypi', 'oci'] as const;
type RunnableType = (typeof RUNNABLE_TYPES)[number];

/** Types the registry knows that need a build or download step no pod can do on its own. */
const NOT_RUNNABLE: Record<string, string> = {
  nuget: 'a NuGet package needs the .NET SDK (dnx) and a build',
  cargo: 'a Cargo crate must be compiled (cargo install)',
  mcpb: 'an MCP bundle is downloaded and unpacked by a desktop client',
};

export interface ImportChoices {
  /** The MCPServer's name; by default derived from the entry's name. */
  name?: string | undefined;
  namespace?: string | undefined;
  /** A registry type (`npm`, `pypi`, `oci`), a package identifier, or `remote`. */
  package?: string | undefined;
  /** The image that runs npx or uvx, instead of LAUNCHER_IMAGES. */
  image?: string | undefined;
  /** The command an OCI image runs for stdio (the entry cannot say what its entrypoint is). */
  command?: readonly string[] | undefined;
  /** The Secret holding secret inputs, one key per variable (header secrets: key `token`). */
  secret?: string | undefined;
  inputs: GivenInputs;
}

/** Where the entry came from: recorded on the MCPServer. */
export interface EntryOrigin {
  /** The registry's API root, or undefined for a file or URL. */
  registry: string | undefined;
  /** Where it was read, for messages. */
  source: string;
}

export interface ImportPlan {
  server: MCPServer;
  /** The Secret the server reads and the keys it must hold (its optional keys aside). */
  secret?: { name: string; keys: string[] } | undefined;
  /** What a reader should know: inputs left out, fixed values, a tag that may move. */
  notes: string[];
  /** The package chosen, as the registry-package annotation records it. */
  chosen: string;
}

/** One package or remote the entry lists, as a candidate to run. */
type Candidate =
  | { kind: 'package'; index: number; pkg: Package }
  | { kind: 'remote'; index: number; remote: RemoteTransport };

/** Plans the MCPServer for `entry`; throws when it cannot run or inputs are missing. */
export function planImport(
  entry: ServerJson,
  origin: EntryOrigin,
  choices: ImportChoices,
): ImportPlan {
  const candidate = choose(entry, choices.package);
  const ledger = new InputLedger(choices.inputs);
  const built =
    candidate.kind === 'remote'
      ? remoteSpec(entry, candidate.remote, choices, ledger)
      : packageSpec(entry, candidate.pkg, choices, ledger);
  const unused = ledger.unused();
  if (unused.length > 0)
    ledger.missing.push(
      ...unused.map((flag) => `${flag}: the entry declares no such input (see its server.json)`),
    );
  if (ledger.missing.length > 0)
    throw operatorError(
      'MCPOP_IMPORT_MISSING_INPUTS',
      entry.name,
      ledger.missing.map((line) => `  - ${line}`).join('\n'),
    );
  const provenance: RegistryProvenance = {
    registry: origin.registry,
    name: entry.name,
    version: entry.version,
    package: built.chosen,
  };
  const server: MCPServer = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: choices.name ?? serverName(entry.name),
      ...(choices.namespace === undefined ? {} : { namespace: choices.namespace }),
      annotations: provenanceAnnotations(provenance),
    },
    spec: built.spec,
  };
  const keys = [...new Set(built.secretKeys)];
  return {
    server,
    secret:
      choices.secret !== undefined && keys.length > 0 ? { name: choices.secret, keys } : undefined,
    notes: ledger.notes,
    chosen: built.chosen,
  };
}

/** A DNS-1035 label from the part of a registry name after its slash. */
export function serverName(registryName: string): string {
  const base = (registryName.split('/').at(-1) ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  if (base === '')
    throw operatorError(
      'MCPOP_IMPORT_NO_PACKAGE',
      registryName,
      'no MCPServer name can be made from it; give --name',
    );
  return base;
}

function candidates(entry: ServerJson): Candidate[] {
  return [
    ...(entry.packages ?? []).map((pkg, index): Candidate => ({ kind: 'package', index, pkg })),
    ...(entry.remotes ?? []).map((remote, index): Candidate => ({ kind: 'remote', index, remote })),
  ];
}

/** Why a candidate cannot run here, or undefined when it can. */
function unrunnable(candidate: Candidate): string | undefined {
  const transport = candidate.kind === 'remote' ? candidate.remote : candidate.pkg.transport;
  if (transport.type === 'sse')
    return 'it speaks the HTTP+SSE transport of 2024-11-05, which mcp-operator does not serve or discover';
  if (candidate.kind === 'remote') return undefined;
  const type = candidate.pkg.registryType;
  if ((RUNNABLE_TYPES as readonly string[]).includes(type)) return undefined;
  return (
    NOT_RUNNABLE[type] ??
    `registry type ${JSON.stringify(type)} is not one mcp-operator knows (${RUNNABLE_TYPES.join(', ')})`
  );
}

function label(candidate: Candidate): string {
  return candidate.kind === 'remote'
    ? `remotes[${candidate.index}] (${candidate.remote.type})`
    : `packages[${candidate.index}] (${candidate.pkg.registryType} ${candidate.pkg.identifier})`;
}

/** The candidate `wanted` names, or the first runnable one by RUNNABLE_TYPES, then a remote. */
function choose(entry: ServerJson, wanted: string | undefined): Candidate {
  const all = candidates(entry);
  if (all.length === 0)
    throw operatorError(
      'MCPOP_IMPORT_NO_PACKAGE',
      entry.name,
      'its entry lists no package and no remote',
    );
  const matches =
    wanted === undefined
      ? all
      : all.filter((c) =>
          c.kind === 'remote'
            ? wanted === 'remote'
            : c.pkg.registryType === wanted || c.pkg.identifier === wanted,
        );
  if (matches.length === 0)
    throw operatorError(
      'MCPOP_IMPORT_NO_PACKAGE',
      entry.name,
      `--package ${wanted} matches none of ${all.map(label).join(', ')}`,
    );
  const order = (c: Candidate) =>
    c.kind === 'remote'
      ? RUNNABLE_TYPES.length
      : RUNNABLE_TYPES.indexOf(c.pkg.registryType as RunnableType);
  const runnable = matches
    .filter((c) => unrunnable(c) === undefined)
    .sort((a, b) => order(a) - order(b));
  const chosen = runnable[0];
  if (chosen === undefined)
    throw operatorError(
      'MCPOP_IMPORT_NO_PACKAGE',
      entry.name,
      matches.map((c) => `${label(c)}: ${unrunnable(c)}`).join('; '),
    );
  return chosen;
}

interface Built {
  spec: MCPServer['spec'];
  secretKeys: string[];
  chosen: string;
}

function packageSpec(
  entry: ServerJson,
  pkg: Package,
  choices: ImportChoices,
  ledger: InputLedger,
): Built {
  const type = pkg.registryType as RunnableType;
  const what = `${entry.name} ${pkg.registryType} package ${pkg.identifier}`;
  const env = environment(pkg.environmentVariables ?? [], choices.secret, ledger);
  const runtime = argumentList(
    pkg.runtimeArguments ?? [],
    'runtime argument',
    ledger,
    type === 'oci',
  );
  const packageArgs = argumentList(pkg.packageArguments ?? [], 'package argument', ledger, false);
  const transport = packageTransport(pkg, ledger);
  let image: string;
  let command: string[] | undefined;
  let chosen: string;
  if (type === 'oci') {
    const reference = parseImage(pkg.identifier);
    // Older entries kept an image's tag in `version`, beside the repository.
    const tagged =
      reference.tag === undefined && reference.digest === undefined && pkg.version !== undefined
        ? parseImage(`${pkg.identifier}:${pkg.version}`)
        : reference;
    const problem = imagePinProblem(tagged);
    if (problem !== undefined)
      throw operatorError('MCPOP_IMPORT_UNPINNED', what, tagged.tag ?? '', problem);
    image = `${tagged.repository}${tagged.tag === undefined ? '' : `:${tagged.tag}`}${tagged.digest === undefined ? '' : `@${tagged.digest}`}`;
    if (tagged.digest === undefined)
      ledger.notes.push(
        `the image is pinned by its tag ${tagged.tag} only (the entry gives no digest): the operator records the digest each pod runs (status.provenance) and reports a tag that moves`,
      );
    if (transport.type === 'stdio') {
      if (choices.command === undefined)
        ledger.missing.push(
          'the command the image runs: a stdio server is started by the bridge, and the entry does not say what the image\'s entrypoint is; give --command "<program> [args]"',
        );
      command = choices.command === undefined ? undefined : [...choices.command];
    }
    chosen = `oci:${image}`;
  } else {
    const version = pkg.version;
    if (version === undefined)
      throw operatorError(
        'MCPOP_IMPORT_UNPINNED',
        what,
        '',
        'the entry gives no version, so npx or uvx would resolve whatever is newest at every start',
      );
    const problem = type === 'npm' ? npmPinProblem(version) : pypiPinProblem(version);
    if (problem !== undefined) throw operatorError('MCPOP_IMPORT_UNPINNED', what, version, problem);
    const spec = `${pkg.identifier}@${version}`;
    image = choices.image ?? LAUNCHER_IMAGES[type];
    command = type === 'npm' ? ['npx', '-y', ...runtime, spec] : ['uvx', ...runtime, spec];
    chosen = `${type}:${spec}`;
  }
  const args = type === 'oci' ? [...runtime, ...packageArgs] : packageArgs;
  return {
    spec: {
      image,
      transport: transport.type,
      ...(command === undefined ? {} : { command }),
      ...(args.length === 0 ? {} : { args }),
      ...(transport.port === undefined ? {} : { port: transport.port }),
      ...(transport.path === undefined || transport.path === DEFAULTS.path
        ? {}
        : { path: transport.path }),
      ...(env.vars.length === 0 ? {} : { env: env.vars }),
    },
    secretKeys: env.secretKeys,
    chosen,
  };
}

/** The MCPServer transport of a package, with the port and path of its own HTTP endpoint. */
function packageTransport(
  pkg: Package,
  ledger: InputLedger,
): { type: 'stdio' | 'streamable-http'; port?: number; path?: string } {
  const transport = pkg.transport;
  if (transport.type !== 'streamable-http') return { type: 'stdio' };
  // The URL names where the package listens once started; `{--port}` and the like refer to
  // its arguments and environment (server.json: "In Package context, they reference …").
  const url = (transport.url ?? '').replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const fromArgs = ledger.given.args.get(name.replace(/^-+/, '')) ?? ledger.given.args.get(name);
    const fromEnv = ledger.given.env.get(name);
    const declared = [...(pkg.packageArguments ?? []), ...(pkg.environmentVariables ?? [])].find(
      (input) =>
        ('name' in input && input.name === name) ||
        ('valueHint' in input && input.valueHint === name),
    );
    return fromArgs?.[0] ?? fromEnv?.[0] ?? declared?.default ?? declared?.value ?? '';
  });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    ledger.missing.push(
      `the port the package listens on: its transport URL ${JSON.stringify(transport.url)} does not resolve to a URL`,
    );
    return { type: 'streamable-http' };
  }
  const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  return { type: 'streamable-http', port, path: parsed.pathname || DEFAULTS.path };
}

type EnvVar = NonNullable<MCPServer['spec']['env']>[number];

/** Environment variables: values, and secretKeyRefs into the named Secret for secret ones. */
function environment(
  declared: readonly KeyValueInput[],
  secret: string | undefined,
  ledger: InputLedger,
): { vars: EnvVar[]; secretKeys: string[] } {
  const vars: EnvVar[] = [];
  const secretKeys: string[] = [];
  for (const input of declared) {
    const label = `environment variable ${input.name}`;
    if (input.isSecret === true && input.value === undefined) {
      if (ledger.take('env', input.name) !== undefined)
        ledger.missing.push(
          `${label} is a secret: put it in a Secret (--secret), not on the command line`,
        );
      if (secret === undefined) {
        if (input.isRequired === true)
          ledger.missing.push(
            `${label}${describe(input)} is a secret: give --secret SECRET, a Secret whose key ${input.name} holds it`,
          );
        else
          ledger.notes.push(
            `${label} (optional, secret) is left unset: --secret SECRET sets it from a Secret`,
          );
        continue;
      }
      vars.push({
        name: input.name,
        valueFrom: {
          secretKeyRef: {
            name: secret,
            key: input.name,
            ...(input.isRequired === true ? {} : { optional: true }),
          },
        },
      });
      if (input.isRequired === true) secretKeys.push(input.name);
      else
        ledger.notes.push(
          `${label} (optional) comes from key ${input.name} of Secret ${secret} when it holds one`,
        );
      continue;
    }
    const value = resolveInput(ledger, input, label, 'env', input.name);
    if (value?.[0] !== undefined) vars.push({ name: input.name, value: value[0] });
  }
  return { vars, secretKeys };
}

/**
 * Arguments in the entry's order. A positional one is its value(s); a named one its flag and
 * value (`--port`, `8080`), or the flag alone when it takes no value. `dockerFlags`: the
 * runtime arguments of an OCI package, which are `docker run` flags with no pod equivalent.
 */
function argumentList(
  declared: readonly Argument[],
  kind: string,
  ledger: InputLedger,
  dockerFlags: boolean,
): string[] {
  const argv: string[] = [];
  for (const arg of declared) {
    const key = arg.type === 'named' ? (arg.name ?? '') : (arg.valueHint ?? '');
    const label = `${kind} ${arg.type === 'named' ? key : (arg.valueHint ?? JSON.stringify(arg.value))}`;
    if (dockerFlags) {
      if (arg.isRequired === true)
        ledger.missing.push(
          `${label}: a docker run flag, which a pod has no equivalent of; choose another package (--package)`,
        );
      else ledger.notes.push(`${label} (a docker run flag) is left out`);
      continue;
    }
    if (arg.isSecret === true && arg.value === undefined) {
      ledger.missing.push(
        `${label} is a secret argument: an argument is part of the spec, where no secret belongs`,
      );
      continue;
    }
    const values =
      arg.type === 'named'
        ? resolveNamed(ledger, arg, label, key)
        : resolveInput(ledger, arg, label, 'args', key);
    if (values === undefined) continue;
    const repeated = arg.isRepeated === true ? values : values.slice(0, 1);
    for (const value of repeated) {
      if (arg.type === 'named') argv.push(key, ...(value === '' ? [] : [value]));
      else argv.push(value);
    }
  }
  return argv;
}

/** A named argument is given as `--arg port=8080` (or `--arg=--port=8080`). */
function resolveNamed(
  ledger: InputLedger,
  arg: Argument,
  label: string,
  flag: string,
): string[] | undefined {
  const bare = flag.replace(/^-+/, '');
  const key = ledger.given.args.has(flag) ? flag : bare;
  return resolveInput(ledger, arg, label, 'args', key);
}

/** A remote: a `url` server, its bearer token from the Secret; URL variables filled in. */
function remoteSpec(
  entry: ServerJson,
  remote: RemoteTransport,
  choices: ImportChoices,
  ledger: InputLedger,
): Built {
  const url = resolveInput(
    ledger,
    { value: remote.url ?? '', variables: remote.variables },
    `the URL of ${entry.name}`,
    'args',
    '',
  )?.[0];
  const secretKeys: string[] = [];
  let auth: MCPServer['spec']['auth'];
  for (const header of remote.headers ?? []) {
    const label = `header ${header.name}`;
    if (header.name.toLowerCase() === 'authorization') {
      if (choices.secret === undefined) {
        if (header.isRequired === true)
          ledger.missing.push(
            `${label}${describe(header)}: give --secret SECRET, a Secret whose key ${DEFAULTS.authKey} holds the bearer token`,
          );
        continue;
      }
      auth = { secretRef: { name: choices.secret } };
      secretKeys.push(DEFAULTS.authKey);
      continue;
    }
    const given = ledger.take('headers', header.name);
    if (header.isRequired === true)
      ledger.missing.push(
        `${label}${describe(header)}: a url server sends only a bearer token (spec.auth), no other header; this remote cannot be reached as the entry describes`,
      );
    else if (given !== undefined || header.default !== undefined)
      ledger.notes.push(`${label} is not sent: a url server sends only a bearer token (spec.auth)`);
  }
  return {
    spec: { url: url ?? '', ...(auth === undefined ? {} : { auth }) },
    secretKeys,
    chosen: `remote:${url ?? remote.url ?? ''}`,
  };
}
