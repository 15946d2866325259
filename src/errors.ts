/**
 * Local error registry: every error the operator raises on purpose has a stable code, a message
 * template and, where it reaches HTTP, a status. Codes are for logs, events and tests; they are
 * never JSON-RPC wire codes (those live with the bridge, see src/bridge).
 *
 * Add an entry to ERRORS, then throw `operatorError('CODE', ...args)`.
 */

interface ErrorSpec<A extends unknown[]> {
  message: (...args: A) => string;
  httpStatus?: number;
}

const define = <A extends unknown[]>(spec: ErrorSpec<A>): ErrorSpec<A> => spec;

export const ERRORS = {
  MCPOP_BRIDGE_USAGE: define({
    message: (reason: string) => `mcp-operator bridge: ${reason}`,
  }),
  MCPOP_SUPERVISOR_UNAVAILABLE: define({
    message: (control: string, reason: string) =>
      `cannot reach the supervisor through ${control}: ${reason}; is the server container running supervisor.sh?`,
  }),
  MCPOP_CHILD_START_FAILED: define({
    message: (child: string, reason: string) =>
      `MCP server process ${child} did not start: ${reason}`,
  }),
  MCPOP_BRIDGE_INSTALL: define({
    message: (file: string, reason: string) => `bridge-install: cannot copy ${file}: ${reason}`,
  }),
  MCPOP_POLICY_INVALID: define({
    message: (file: string, reason: string) => `policy file ${file} is invalid: ${reason}`,
  }),
  MCPOP_INVALID_FLAG: define({
    message: (flag: string, reason: string) => `invalid value for ${flag}: ${reason}`,
  }),
  MCPOP_NOT_CANONICAL: define({
    message: (reason: string) => `cannot digest a value that RFC 8785 cannot represent: ${reason}`,
  }),
  MCPOP_DISCOVERY_UNAUTHORIZED: define({
    message: (url: string, status: number) =>
      `${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'} from ${url}: the server refused the bearer token; check spec.auth.secretRef`,
  }),
  MCPOP_DISCOVERY_HTTP_STATUS: define({
    message: (url: string, method: string, status: number, body: string) =>
      `HTTP ${status} from ${url} for ${method} (${body}, not shown): check that the URL is the MCP endpoint of a Streamable HTTP server, and that server's own logs`,
  }),
  MCPOP_DISCOVERY_REDIRECT: define({
    message: (url: string, method: string, status: number, location: string) =>
      `HTTP ${status} from ${url} for ${method}: redirected to ${location}; point discovery at the final URL`,
  }),
  MCPOP_DISCOVERY_UNREACHABLE: define({
    message: (url: string, reason: string) =>
      `cannot reach ${url}: ${reason}; check that the server runs and that its URL, port and path are right`,
  }),
  MCPOP_DISCOVERY_EGRESS_DENIED: define({
    message: (url: string, where: string, range: string, why: string) =>
      `discovery does not connect to ${url}: ${where} is in ${range} (${why}), which the operator's egress policy denies; if the server is meant to be reached there, the operator's administrator can allow the range (--discovery-allowed-cidrs, chart value discovery.egress.allowedCIDRs)`,
  }),
  MCPOP_DISCOVERY_TIMEOUT: define({
    message: (url: string, method: string, budgetMs: number) =>
      `${url} did not answer ${method} within the discovery budget of ${budgetMs} ms: the server hangs or is too slow (spec.discovery.timeout)`,
  }),
  MCPOP_DISCOVERY_CANCELLED: define({
    message: (url: string) => `discovery of ${url} was cancelled`,
  }),
  MCPOP_DISCOVERY_TOO_LARGE: define({
    message: (url: string, limitBytes: number) =>
      `${url} sent more than ${limitBytes} bytes; discovery stopped reading (a tool list this large cannot be recorded)`,
  }),
  MCPOP_DISCOVERY_BAD_RESPONSE: define({
    message: (url: string, method: string, reason: string) =>
      `malformed answer from ${url} to ${method}: ${reason}`,
  }),
  MCPOP_DISCOVERY_INVALID_RESULT: define({
    message: (url: string, method: string, path: string, problem: string) =>
      `invalid ${method} result from ${url} at ${path === '' ? '/' : path}: ${problem}`,
  }),
  MCPOP_DISCOVERY_RPC_ERROR: define({
    message: (url: string, method: string, code: number, text: string) =>
      `${url} answered ${method} with JSON-RPC error ${code}: ${text}`,
  }),
  MCPOP_DISCOVERY_UNSUPPORTED_VERSION: define({
    message: (url: string, offered: string, known: string) =>
      `${url} speaks no MCP protocol version discovery knows (server: ${offered}; discovery: ${known})`,
  }),
  MCPOP_DISCOVERY_ENDLESS_PAGES: define({
    message: (url: string, reason: string) =>
      `tools/list pagination from ${url} does not end: ${reason}`,
  }),
  MCPOP_DISCOVERY_TOO_MANY_TOOLS: define({
    message: (url: string, limit: number) =>
      `${url} lists more than ${limit} tools; discovery stopped (raise the limit only if the server really has that many)`,
  }),
  MCPOP_DISCOVERY_DUPLICATE_TOOL: define({
    message: (url: string, name: string) =>
      `${url} lists the tool '${name}' more than once; tool names must be unique within a server`,
  }),
  MCPOP_DISCOVERY_AUTH_SECRET: define({
    message: (secret: string, problem: string) =>
      `cannot read the bearer token for discovery: Secret ${secret} (spec.auth.secretRef) ${problem}`,
  }),
  MCPOP_DISCOVERY_TOKEN_SECRET: define({
    message: (secret: string, problem: string) =>
      `cannot read the discovery token the bridge expects under driftPolicy Enforce: Secret ${secret} ${problem}; the operator creates it and the next pass puts it back`,
  }),
  MCPOP_SNAPSHOT_INVALID: define({
    message: (source: string, reason: string) => `the snapshot in ${source} is invalid: ${reason}`,
  }),
  MCPOP_NOT_DISCOVERED: define({
    message: (server: string, reason: string) =>
      `${server} has no snapshot to read: ${reason}; see its Discovered condition (kubectl describe mcps)`,
  }),
  MCPOP_COMMAND_USAGE: define({
    message: (command: string, reason: string) => `mcp-operator ${command}: ${reason}`,
  }),
  MCPOP_BASELINE_INVALID: define({
    message: (source: string, reason: string) =>
      `the approved tools in ${source} are invalid: ${reason}`,
  }),
  MCPOP_KUBE_API: define({
    message: (request: string, status: number, detail: string) =>
      `${request}: HTTP ${status}: ${detail}`,
  }),
  MCPOP_KUBE_CONFIG: define({
    message: (reason: string) => `no usable Kubernetes client configuration: ${reason}`,
  }),
  MCPOP_LEADERSHIP_LOST: define({
    message: (lease: string) => `lost leadership of lease ${lease}; stopping so another can lead`,
  }),
  MCPOP_OPTIONAL_DEPENDENCY: define({
    message: (pkg: string, needs: string) =>
      `${needs} needs the optional package ${pkg}, which this installation leaves out ` +
      `(the container image does): install it with \`npm install ${pkg}\``,
  }),
  MCPOP_DEV_NO_CLUSTER: define({
    message: (tried: string, reason: string) =>
      `no Kubernetes cluster answers at ${tried} and ${reason}; point KUBECONFIG at a cluster`,
  }),
} as const;

export type ErrorCode = keyof typeof ERRORS;
type ArgsOf<C extends ErrorCode> = Parameters<(typeof ERRORS)[C]['message']>;

export class OperatorError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number | undefined;

  constructor(code: ErrorCode, message: string, httpStatus?: number, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OperatorError';
    this.code = code;
    this.httpStatus = httpStatus;
  }
}

export function operatorError<C extends ErrorCode>(code: C, ...args: ArgsOf<C>): OperatorError {
  const spec = ERRORS[code] as ErrorSpec<ArgsOf<C>>;
  return new OperatorError(code, spec.message(...args), spec.httpStatus);
}
