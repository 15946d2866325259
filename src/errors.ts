/**
 * Local error registry: every error the operator raises on purpose has a stable code, a message
 * template and a hint that says what to do about it. Codes are for logs, events and tests; they
 * are never JSON-RPC wire codes (those are in src/mcp/jsonrpc.ts). docs/errors.md is generated
 * from this registry (`npm run docs`), and `npm run check` fails when it is stale.
 *
 * Add an entry to ERRORS, then throw `operatorError('CODE', ...args)`.
 */

interface ErrorSpec<A extends unknown[]> {
  message: (...args: A) => string;
  /** What the reader should check or do, for docs/errors.md. */
  hint: string;
}

const define = <A extends unknown[]>(spec: ErrorSpec<A>): ErrorSpec<A> => spec;

export const ERRORS = {
  MCPOP_BRIDGE_USAGE: define({
    // The command puts its name before it, once.
    message: (reason: string) => reason,
    hint: 'Run `mcp-operator bridge --help` for the flags; in a pod the controller renders them, so a bad value there comes from the MCPServer spec.',
  }),
  MCPOP_SUPERVISOR_UNAVAILABLE: define({
    message: (control: string, reason: string) =>
      `cannot reach the supervisor through ${control}: ${reason}; is the server container running supervisor.sh?`,
    hint: "The server container runs the supervisor from the shared emptyDir; check that it started (`kubectl logs <pod> -c server`) and that the bridge's --supervisor-dir is that volume.",
  }),
  MCPOP_COMMAND_NOT_FOUND: define({
    message: (command: string, where: string) =>
      `${command}: command not found ${where}; give the server's command after --, as a path or a program on PATH`,
    hint: 'In local mode the bridge runs the command after `--` itself: check its spelling, that it is installed, and PATH.',
  }),
  MCPOP_ADDRESS_IN_USE: define({
    message: (address: string, flag: string) =>
      `${address} is in use: stop what listens there, or choose another port with ${flag}`,
    hint: 'Another process (often a second copy of the same command) listens on the address; `ss -ltnp` names it.',
  }),
  MCPOP_CHILD_START_FAILED: define({
    message: (child: string, reason: string) =>
      `MCP server process ${child} did not start: ${reason}`,
    hint: "Check spec.command and spec.args, and that the image has the program; the bridge's log has the child's stderr.",
  }),
  MCPOP_BRIDGE_INSTALL: define({
    message: (file: string, reason: string) => `bridge-install: cannot copy ${file}: ${reason}`,
    hint: "The init container copies busybox and supervisor.sh from the image into the pod volume: check that the image is the operator's and the volume is writable.",
  }),
  MCPOP_POLICY_INVALID: define({
    message: (file: string, reason: string) => `policy file ${file} is invalid: ${reason}`,
    hint: 'The controller writes this file from spec.tools (the `<name>-policy` ConfigMap); a hand-edited ConfigMap is put back at the next reconcile.',
  }),
  MCPOP_INVALID_FLAG: define({
    message: (flag: string, reason: string) => `invalid value for ${flag}: ${reason}`,
    hint: 'The message names the flag and what it accepts; durations are Go-style (`30s`, `5m`).',
  }),
  MCPOP_UNKNOWN_FLAG: define({
    message: (flag: string, near: string | undefined) =>
      `unknown flag ${flag}${near === undefined ? '' : `; did you mean ${near}?`}`,
    hint: 'A misspelt flag, or one of another command: `--help` lists the flags each command takes.',
  }),
  MCPOP_UNEXPECTED_ARGUMENT: define({
    message: (argument: string) =>
      `unexpected argument ${JSON.stringify(argument)}: this command takes flags only`,
    hint: 'The command takes no positional arguments; `--help` lists its flags. The bridge takes the server command after `--`.',
  }),
  MCPOP_NOT_CANONICAL: define({
    message: (reason: string) => `cannot digest a value that RFC 8785 cannot represent: ${reason}`,
    hint: 'A tool definition holds a value RFC 8785 canonical JSON cannot represent (a non-finite number, a lone surrogate); the server must list valid JSON.',
  }),
  MCPOP_DISCOVERY_UNAUTHORIZED: define({
    message: (url: string, status: number) =>
      `${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'} from ${url}: the server refused the bearer token; check spec.auth.secretRef`,
    hint: "Put the server's bearer token in the Secret named by spec.auth.secretRef (key `token` unless spec.auth.secretRef.key says otherwise).",
  }),
  MCPOP_DISCOVERY_HTTP_STATUS: define({
    message: (url: string, method: string, status: number, body: string) =>
      `HTTP ${status} from ${url} for ${method} (${body}, not shown): check that the URL is the MCP endpoint of a Streamable HTTP server, and that server's own logs`,
    hint: "The server answered with an HTTP error; its body is never shown, since spec.url may point anywhere (docs/tenancy.md). Check spec.url or the port and path of the server, and the server's own logs.",
  }),
  MCPOP_DISCOVERY_REDIRECT: define({
    message: (url: string, method: string, status: number, location: string) =>
      `HTTP ${status} from ${url} for ${method}: redirected to ${location}; point discovery at the final URL`,
    hint: 'Discovery does not follow redirects (one could carry the bearer token to another host): set spec.url to the final URL the message names.',
  }),
  MCPOP_DISCOVERY_UNREACHABLE: define({
    message: (url: string, reason: string) =>
      `cannot reach ${url}: ${reason}; check that the server runs and that its URL, port and path are right`,
    hint: 'Check that the server runs and that its URL, port and path are right; for a deployed server, that its Service has ready endpoints.',
  }),
  MCPOP_DISCOVERY_EGRESS_DENIED: define({
    message: (url: string, where: string, range: string, why: string) =>
      `discovery does not connect to ${url}: ${where} is in ${range} (${why}), which the operator's egress policy denies; if the server is meant to be reached there, the operator's administrator can allow the range (--discovery-allowed-cidrs, chart value discovery.egress.allowedCIDRs)`,
    hint: "Discovery connects only where the operator's egress policy allows (docs/tenancy.md): use a URL whose addresses are allowed, or have the administrator allow the range with discovery.egress.allowedCIDRs (--discovery-allowed-cidrs).",
  }),
  MCPOP_DISCOVERY_TIMEOUT: define({
    message: (url: string, method: string, budgetMs: number) =>
      `${url} did not answer ${method} within the discovery budget of ${budgetMs} ms: the server hangs or is too slow (spec.discovery.timeout)`,
    hint: 'The server hangs or is slow: raise spec.discovery.timeout, or find out why tools/list takes that long.',
  }),
  MCPOP_DISCOVERY_CANCELLED: define({
    message: (url: string) => `discovery of ${url} was cancelled`,
    hint: 'Not a fault: the server was deleted, its spec changed, or leadership moved while discovery ran. The next run starts on its own.',
  }),
  MCPOP_DISCOVERY_TOO_LARGE: define({
    message: (url: string, limitBytes: number) =>
      `${url} sent more than ${limitBytes} bytes; discovery stopped reading (a tool list this large cannot be recorded)`,
    hint: 'The answer is larger than discovery reads (8 MiB); a tool list that large cannot be recorded.',
  }),
  MCPOP_DISCOVERY_BAD_RESPONSE: define({
    message: (url: string, method: string, reason: string) =>
      `malformed answer from ${url} to ${method}: ${reason}`,
    hint: 'The server does not speak Streamable HTTP as MCP specifies (content type, JSON-RPC shape); check that spec.url points at an MCP endpoint.',
  }),
  MCPOP_DISCOVERY_INVALID_RESULT: define({
    message: (url: string, method: string, path: string, problem: string) =>
      `invalid ${method} result from ${url} at ${path === '' ? '/' : path}: ${problem}`,
    hint: "The server's result does not match the MCP schema at the path named; fix the server.",
  }),
  MCPOP_DISCOVERY_RPC_ERROR: define({
    message: (url: string, method: string, code: number, text: string) =>
      `${url} answered ${method} with JSON-RPC error ${code}: ${text}`,
    hint: 'The server refused the request; its logs say why.',
  }),
  MCPOP_DISCOVERY_UNSUPPORTED_VERSION: define({
    message: (url: string, offered: string, known: string) =>
      `${url} speaks no MCP protocol version discovery knows (server: ${offered}; discovery: ${known})`,
    hint: "The server and the operator share no MCP protocol revision; upgrade the server's MCP SDK.",
  }),
  MCPOP_DISCOVERY_ENDLESS_PAGES: define({
    message: (url: string, reason: string) =>
      `tools/list pagination from ${url} does not end: ${reason}`,
    hint: "The server's tools/list cursors repeat or never end; fix the server's pagination.",
  }),
  MCPOP_DISCOVERY_TOO_MANY_TOOLS: define({
    message: (url: string, limit: number) =>
      `${url} lists more than ${limit} tools; discovery stopped (raise the limit only if the server really has that many)`,
    hint: 'The server lists more tools than discovery records (1,000); split it into several servers.',
  }),
  MCPOP_DISCOVERY_AUTH_SECRET: define({
    message: (secret: string, problem: string) =>
      `cannot read the bearer token for discovery: Secret ${secret} (spec.auth.secretRef) ${problem}`,
    hint: "Create the Secret named by spec.auth.secretRef in the server's namespace, with the token under its key.",
  }),
  MCPOP_DISCOVERY_OAUTH: define({
    message: (part: 'issuer' | 'client' | 'audience' | 'scope', problem: string) =>
      `cannot get an OAuth access token for discovery: the ${part} is wrong: ${problem}`,
    hint: 'The message names what to fix: the issuer (spec.oauth.issuer and its metadata), the client (the Secret of spec.oauth.discovery and the client registered at the issuer), the audience (spec.oauth.resource, which the issuer must know as a resource) or the scope (spec.oauth.scopes, which the client must be allowed).',
  }),
  MCPOP_DISCOVERY_TOKEN_SECRET: define({
    message: (secret: string, problem: string) =>
      `cannot read the discovery token the bridge expects under driftPolicy Enforce: Secret ${secret} ${problem}; the operator creates it and the next pass puts it back`,
    hint: 'The operator creates the `<name>-discovery` Secret for an enforced stdio server; the next reconcile puts a deleted one back.',
  }),
  MCPOP_SNAPSHOT_INVALID: define({
    message: (source: string, reason: string) => `the snapshot in ${source} is invalid: ${reason}`,
    hint: 'The `<name>-snapshot` ConfigMap was edited or is damaged; delete it and the next discovery writes it again.',
  }),
  MCPOP_NOT_DISCOVERED: define({
    message: (server: string, reason: string) =>
      `${server} has no snapshot to read: ${reason}; see its Discovered condition (kubectl describe mcps)`,
    hint: 'Wait for a discovery to succeed; the Discovered condition (`kubectl describe mcps <name>`) says why it has not.',
  }),
  MCPOP_APPROVAL_STALE: define({
    message: (server: string) =>
      `${server} changed since it was read (a new discovery, an edit or another approval); nothing was written: run the command again and review what it shows`,
    hint: 'An approval is written only onto the MCPServer it was planned from (its resourceVersion), so that what was reviewed is what gets approved. Run it again: it plans from what is there now.',
  }),
  MCPOP_APPROVAL_UNCONFIRMED: define({
    message: (what: string) =>
      `${what}; nothing was written: review them above, then run again with --yes, or approve a subset with --tool NAME`,
    hint: 'Approving a changed or removed entry replaces what a person approved before, so it needs --yes (or a y at the prompt in a terminal); new entries alone do not.',
  }),
  MCPOP_APPROVAL_UNKNOWN_TOOL: define({
    message: (tool: string, server: string, suggestion: string) =>
      `--tool ${tool}: ${server} neither lists nor approves a tool of that name${suggestion}`,
    hint: '`mcp-operator diff <name>` lists the tools the server lists and the ones approved.',
  }),
  MCPOP_APPROVER_UNKNOWN: define({
    message: (reason: string) =>
      `cannot tell who is approving (a SelfSubjectReview, which every authenticated user may create): ${reason}`,
    hint: 'The approval records the user name the API server authenticates; the credentials of the kubeconfig must be valid for the cluster (Kubernetes 1.28 or later).',
  }),
  MCPOP_COMMAND_USAGE: define({
    message: (command: string, reason: string) => `mcp-operator ${command}: ${reason}`,
    hint: 'Run the command with --help for its arguments.',
  }),
  MCPOP_BASELINE_INVALID: define({
    message: (source: string, reason: string) =>
      `the approved tools in ${source} are invalid: ${reason}`,
    hint: 'Fix the approved tools in spec.tools.approved or the ConfigMap it references (key `tools.yaml`); `mcp-operator approve` prints a valid list.',
  }),
  MCPOP_REGISTRY_ENTRY_INVALID: define({
    message: (source: string, field: string, problem: string) =>
      `the server.json from ${source} is invalid at ${field === '' ? 'its root' : field}: ${problem}`,
    hint: "The entry does not match the registry's server.json schema (2025-12-11) at the field named; fix the entry, or ask its publisher to.",
  }),
  MCPOP_REGISTRY_NAME_INVALID: define({
    message: (name: string, problem: string) => `cannot look up ${name}: ${problem}`,
    hint: 'A registry name is reverse-DNS, one slash, then the server: `io.github.owner/server`, optionally `@<exact version>`.',
  }),
  MCPOP_REGISTRY_UNREACHABLE: define({
    message: (url: string, reason: string) => `cannot read ${url}: ${reason}`,
    hint: 'Check the registry URL (--registry) or the server.json URL, and that the machine reaches it; nothing was applied.',
  }),
  MCPOP_REGISTRY_TIMEOUT: define({
    message: (url: string, ms: number) =>
      `${url} did not answer within ${ms} ms; nothing was applied (--timeout sets the limit)`,
    hint: 'The registry is slow or hangs: try again, or raise --timeout.',
  }),
  MCPOP_REGISTRY_TOO_LARGE: define({
    message: (url: string, limit: number) =>
      `${url} sent more than ${limit} bytes, more than any server entry needs; nothing was applied`,
    hint: 'A server.json entry is a few KiB; an answer this large is not one.',
  }),
  MCPOP_REGISTRY_HTTP_STATUS: define({
    message: (url: string, status: number, detail: string) => `HTTP ${status} from ${url}${detail}`,
    hint: 'A 404 means the registry has no such server or version (`mcp-operator outdated` and the registry list the versions); other statuses come from the registry.',
  }),
  MCPOP_IMPORT_UNPINNED: define({
    message: (what: string, version: string, why: string) =>
      `${what} has version ${JSON.stringify(version)}, which is not one exact version: ${why}. An MCPServer runs one exact release, so that what was approved is what runs`,
    hint: 'Import an entry whose package names one exact version (`1.2.3`, not `^1.2.3`, `1.x`, `>=1.2` or `latest`): a range resolves a new release whenever a pod starts, which is how a server changes under its approval.',
  }),
  MCPOP_IMPORT_NO_PACKAGE: define({
    message: (name: string, reason: string) => `cannot run ${name}: ${reason}`,
    hint: 'mcp-operator runs npm packages (npx), PyPI packages (uvx), OCI images, and remote servers (a url server); --package chooses among those the entry lists.',
  }),
  MCPOP_IMPORT_MISSING_INPUTS: define({
    message: (name: string, missing: string) => `${name} needs inputs that were not given:
${missing}`,
    hint: 'Give each required input: --env NAME=VALUE, --arg NAME=VALUE (a positional argument by its valueHint, a named one by its flag), --header NAME=VALUE, and --secret SECRET for secret values (one key per variable).',
  }),
  MCPOP_KUBE_API: define({
    message: (request: string, status: number, detail: string) =>
      `${request}: HTTP ${status}: ${detail}`,
    hint: "The Kubernetes API server refused a request; the message has its reason. A 403 means the operator's RBAC lacks a verb (see the chart's ClusterRole).",
  }),
  MCPOP_KUBE_CONFIG: define({
    message: (reason: string) => `no usable Kubernetes client configuration: ${reason}`,
    hint: 'Set KUBECONFIG, or run in a pod with a service account token.',
  }),
  MCPOP_KUBE_CREDENTIALS: define({
    message: (doing: string, reason: string) => `${doing}: ${reason}`,
    hint: "The kubeconfig user's exec plugin or auth-provider failed; its own message follows. Run the plugin's login (for a cloud cluster, its CLI), or choose another context with --context.",
  }),
  MCPOP_KUBE_UNREACHABLE: define({
    message: (server: string, context: string, reason: string) =>
      `cannot reach the Kubernetes API server ${server} (${context}): ${reason}; check that the cluster runs and that this is the context you mean (--context, --kubeconfig)`,
    hint: 'Nothing answers at the address of the kubeconfig context: the cluster is stopped, or another context is meant (`kubectl config get-contexts`).',
  }),
  MCPOP_CRD_MISSING: define({
    message: (server: string) =>
      `the MCPServer CRD is not installed in the cluster at ${server}: install the operator (helm install mcp-operator charts/mcp-operator), or the CRD alone (kubectl apply -f crds/)`,
    hint: 'The cluster does not know the kind MCPServer: install the chart, which installs the CRD, or apply crds/mcpservers.mcp-operator.dev.yaml.',
  }),
  MCPOP_SERVER_NOT_FOUND: define({
    message: (name: string, namespace: string) =>
      `no MCPServer ${name} in namespace ${namespace}; \`kubectl get mcps -A\` lists them all (choose the namespace with -n)`,
    hint: 'The name or the namespace is wrong: without -n the commands use the namespace of the kubeconfig context, else default.',
  }),
  MCPOP_LEADERSHIP_LOST: define({
    message: (lease: string) => `lost leadership of lease ${lease}; stopping so another can lead`,
    hint: 'Not a fault on its own: another replica leads. Repeated, it means the API server is slow to answer Lease updates.',
  }),
  MCPOP_OPTIONAL_DEPENDENCY: define({
    message: (pkg: string, needs: string) =>
      `${needs} needs the optional package ${pkg}, which this installation leaves out ` +
      `(the container image does): install it with \`npm install ${pkg}\``,
    hint: 'The image ships without it: in a pod the operator uses its ServiceAccount. Run commands that need a kubeconfig with exec or auth-provider credentials from an npm installation.',
  }),
  MCPOP_DEV_NO_CLUSTER: define({
    message: (tried: string, reason: string) =>
      `no Kubernetes cluster answers at ${tried} and ${reason}; point KUBECONFIG at a cluster`,
    hint: 'Point KUBECONFIG at a cluster, or install Go so that `mcp-operator dev` can build and start the local control plane.',
  }),
} as const;

export type ErrorCode = keyof typeof ERRORS;
type ArgsOf<C extends ErrorCode> = Parameters<(typeof ERRORS)[C]['message']>;

export class OperatorError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OperatorError';
    this.code = code;
  }
}

export function operatorError<C extends ErrorCode>(code: C, ...args: ArgsOf<C>): OperatorError {
  const spec = ERRORS[code] as ErrorSpec<ArgsOf<C>>;
  return new OperatorError(code, spec.message(...args));
}
