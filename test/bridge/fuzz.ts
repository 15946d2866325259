/**
 * Property-based fuzzing of the bridge's two faces, shared by the short run in the tests
 * (fuzz.test.ts) and the long one (bench/fuzz-bridge.ts):
 *
 * - the HTTP front: raw request lines, headers and bodies over a socket, of both protocol
 *   eras (2025-11-25 sessions, 2026-07-28 stateless requests), valid, nearly valid and not;
 * - the child side: lines a hostile stdio child writes (fixtures/fuzz-child.ts), aimed at the
 *   ids of requests in flight.
 *
 * fast-check generates the cases from a seed (fc.sample), so a run can be replayed; they go in
 * batches against one real bridge process, and after each batch the process must be up, serve
 * /healthz and answer a request of a session the fuzzer never touched. Resident memory is
 * sampled after every batch. A case's outcome (status, media type, JSON-RPC error code and the
 * error message with its numbers and quoted parts taken out) says which way the bridge went;
 * the distinct outcomes are the paths a run observed.
 */

import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { connect as connectSocket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CLI } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';

export const ERAS = ['2025-11-25', '2026-07-28'] as const;

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const META_CLIENT = 'io.modelcontextprotocol/clientInfo';

/** Methods of both eras, and a few that are not. */
const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'server/discover',
  'subscriptions/listen',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  '__proto__',
  'constructor',
];

/** Tool names of the fuzzed servers, and names that reach a prototype if looked up carelessly. */
const NAMES = ['echo', 'hang', 'elicit', 'progress', 'emit', 'list', 'toString', '__proto__', ''];

/** Strings that have broken parsers, lookups and URL handling before. */
const tricky = fc.constantFrom(
  '',
  '\u0000',
  '\r\n',
  '%00',
  '..%2F..%2F',
  '__proto__',
  'constructor',
  'toString',
  '\ud800',
  '\u202e',
  'http://[',
  '//[::1',
  '\u001b[2J',
  'x'.repeat(5000),
);

const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: tricky },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

/** A JSON value, now and then one nested deeper than any parser's stack. */
const deep = fc
  .integer({ min: 100, max: 20_000 })
  .map((depth) => ({ [RAW]: `${'['.repeat(depth)}${']'.repeat(depth)}` }));
const value = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: tricky },
);

/** Stands for raw JSON text in a value (a depth bomb that JSON.stringify itself cannot make). */
const RAW = '\u0000raw';

/** JSON text of `v`, with raw parts (RAW) spliced in as they are. */
export function jsonText(v: unknown): string {
  const raws: string[] = [];
  const json = JSON.stringify(v, (_key, part: unknown) => {
    if (part && typeof part === 'object' && RAW in part) {
      raws.push((part as Record<string, string>)[RAW]!);
      return `${RAW}${raws.length - 1}`;
    }
    return part;
  });
  return (json ?? 'null').replace(/"\\u0000raw(\d+)"/g, (_m, i: string) => raws[Number(i)]!);
}

const id = fc.oneof(
  { weight: 6, arbitrary: fc.integer() },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 1.5, -0, 2 ** 60, true, {}, []) },
);

function meta(era: (typeof ERAS)[number]) {
  const common = { progressToken: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })) };
  if (era === '2025-11-25') return fc.record(common, { requiredKeys: [] });
  return fc.record(
    {
      [META_VERSION]: fc.oneof(fc.constantFrom(...ERAS), text),
      [META_CAPABILITIES]: fc.oneof(
        fc.constant({}),
        fc.constant({ elicitation: { form: {} }, sampling: {}, roots: {} }),
        value,
      ),
      [META_CLIENT]: fc.constant({ name: 'fuzz', version: '1' }),
      'io.modelcontextprotocol/logLevel': fc.constantFrom('debug', 'info', 'nonsense'),
      ...common,
    },
    { requiredKeys: [META_VERSION, META_CAPABILITIES] },
  );
}

function params(era: (typeof ERAS)[number]) {
  return fc.record(
    {
      name: fc.oneof(fc.constantFrom(...NAMES), text),
      uri: fc.oneof(fc.constantFrom('demo://x', 'file:///etc/passwd', 'demo://a/..%2Fb'), text),
      arguments: fc.oneof(
        fc.record({ text: text, steps: fc.integer({ min: -1, max: 5 }) }, { requiredKeys: [] }),
        value,
      ),
      protocolVersion: fc.oneof(fc.constantFrom(...ERAS, '2024-11-05'), text),
      capabilities: fc.oneof(fc.constant({}), value),
      clientInfo: fc.constant({ name: 'fuzz', version: '1' }),
      requestState: text,
      inputResponses: fc.dictionary(text, value, { maxKeys: 3 }),
      cursor: text,
      level: fc.constantFrom('debug', 'emergency', 'x'),
      requestId: id,
      notifications: fc.record(
        {
          toolsListChanged: fc.boolean(),
          resourceSubscriptions: fc.array(fc.constantFrom('demo://x', 'demo://y'), {
            maxLength: 300,
          }),
        },
        { requiredKeys: [] },
      ),
      _meta: meta(era),
    },
    { requiredKeys: [] },
  );
}

/**
 * One JSON-RPC message of an era: mostly a request, else a notification, a response or any
 * mix of their fields, so that most cases get past the shape check to what follows it.
 */
function message(era: (typeof ERAS)[number]) {
  const jsonrpc = fc.oneof(
    { weight: 9, arbitrary: fc.constant('2.0') },
    { weight: 1, arbitrary: text },
  );
  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...METHODS) },
    { weight: 1, arbitrary: text },
  );
  const body = fc.oneof({ weight: 8, arbitrary: params(era) }, { weight: 1, arbitrary: value });
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record(
        { jsonrpc, id, method, params: body },
        { requiredKeys: ['jsonrpc', 'id', 'method'] },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record(
        { jsonrpc, method, params: body },
        { requiredKeys: ['jsonrpc', 'method'] },
      ),
    },
    { weight: 1, arbitrary: fc.record({ jsonrpc, id, result: value }) },
    {
      weight: 1,
      arbitrary: fc.record(
        { jsonrpc, id, method, params: body, result: value, error: value },
        { requiredKeys: ['jsonrpc'] },
      ),
    },
  );
}

/** Header names the bridge reads, and their values: right, wrong and hostile. */
const HEADER_NAMES = [
  'accept',
  'content-type',
  'origin',
  'authorization',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-param-region',
  'last-event-id',
  'mcp-operator-discovery-token',
  'x-forwarded-for',
  'host',
];
const headerValue = fc.oneof(
  { weight: 12, arbitrary: fc.string({ maxLength: 30 }) },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      ...ERAS,
      'application/json',
      'text/event-stream',
      '*/*',
      'Bearer x',
      'null',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constant('y'.repeat(20_000)) },
);

/** What the fuzzer knows of the bridge under test: a session it may use. */
export interface FrontContext {
  session: string;
}

/** One exchange of the front fuzz: the bytes, before the session is put in. */
export interface FrontCase {
  build(context: FrontContext): Buffer;
}

const TARGETS = [
  '/mcp',
  '/mcp?x=1',
  '/mcp/',
  '/MCP',
  '/healthz',
  '/readyz',
  '/metrics',
  '/changes',
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
  '*',
  'http://[/',
  '//[::1/mcp',
  'http://127.0.0.1/mcp',
  '/%',
  '/mcp%00',
];

/** The front fuzz: a request line, headers and a body, of either era. */
export const frontCase: fc.Arbitrary<FrontCase> = fc
  .constantFrom(...ERAS)
  .chain((era) =>
    fc.record({
      era: fc.constant(era),
      verb: fc.oneof(
        { weight: 12, arbitrary: fc.constant('POST') },
        { weight: 3, arbitrary: fc.constantFrom('GET', 'DELETE') },
        { weight: 1, arbitrary: fc.constantFrom('PUT', 'OPTIONS', 'HEAD', 'PATCH', 'X') },
      ),
      target: fc.oneof(
        { weight: 12, arbitrary: fc.constant('/mcp') },
        { weight: 3, arbitrary: fc.constantFrom(...TARGETS) },
        {
          weight: 1,
          arbitrary: fc
            .string({ unit: 'binary-ascii', maxLength: 30 })
            .map((s) => `/${s.replace(/[\s]/g, '')}`),
        },
      ),
      body: fc.oneof(
        { weight: 10, arbitrary: message(era).map((m) => ({ message: m })) },
        {
          weight: 2,
          arbitrary: fc.array(message(era), { maxLength: 4 }).map((batch) => ({ batch })),
        },
        { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ bytes })) },
        {
          weight: 1,
          arbitrary: message(era).chain((m) =>
            fc.nat().map((cut) => ({ truncated: jsonText(m).slice(0, cut % 200) })),
          ),
        },
      ),
      useSession: fc.boolean(),
      mirrored: fc.oneof(
        { weight: 4, arbitrary: fc.constant(true) },
        { weight: 1, arbitrary: fc.constant(false) },
      ),
      extra: fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES), headerValue), { maxLength: 3 }),
      framing: fc.oneof(
        { weight: 10, arbitrary: fc.constant('length' as const) },
        {
          weight: 1,
          arbitrary: fc.constantFrom('chunked' as const, 'short' as const, 'long' as const),
        },
      ),
    }),
  )
  .map((c) => ({
    build(context: FrontContext): Buffer {
      const body =
        'bytes' in c.body
          ? Buffer.from(c.body.bytes)
          : Buffer.from(
              'truncated' in c.body
                ? c.body.truncated
                : jsonText('batch' in c.body ? c.body.batch : c.body.message),
            );
      const headers: [string, string][] = [
        ['host', '127.0.0.1'],
        ['connection', 'close'],
        ['content-type', 'application/json'],
        ['accept', 'application/json, text/event-stream'],
      ];
      const first = ('message' in c.body ? c.body.message : undefined) as
        { method?: unknown; params?: unknown } | undefined;
      if (c.era === '2025-11-25') {
        if (c.useSession) headers.push(['mcp-session-id', context.session]);
        headers.push(['mcp-protocol-version', '2025-11-25']);
      } else {
        headers.push(['mcp-protocol-version', '2026-07-28']);
        const p = (first?.params ?? {}) as Record<string, unknown>;
        if (c.mirrored && typeof first?.method === 'string')
          headers.push(['mcp-method', first.method]);
        const name = p.name ?? p.uri;
        if (c.mirrored && typeof name === 'string') headers.push(['mcp-name', name]);
      }
      headers.push(...c.extra);
      if (c.framing === 'chunked') headers.push(['transfer-encoding', 'chunked']);
      else {
        const skew = c.framing === 'short' ? -1 : c.framing === 'long' ? 7 : 0;
        headers.push(['content-length', String(Math.max(0, body.length + skew))]);
      }
      const head = `${c.verb} ${c.target} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
      const payload =
        c.framing === 'chunked'
          ? Buffer.concat([
              Buffer.from(`${body.length.toString(16)}\r\n`),
              body,
              Buffer.from('\r\n0\r\n\r\n'),
            ])
          : body;
      return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
    },
  }));

/** A line the child writes: a message aimed at a request in flight, or bytes that are none. */
const childLine: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({
        target: fc.constantFrom(
          '$ID',
          '$PREV',
          '$NEXT',
          '"$ID"',
          '0',
          '-1',
          'null',
          '1e400',
          '"x"',
        ),
        body: fc.oneof(
          value.map((v) => `"result":${jsonText(v)}`),
          fc.record({ code: value, message: value }).map((e) => `"error":${jsonText(e)}`),
        ),
      })
      .map(({ target, body }) => `{"jsonrpc":"2.0","id":${target},${body}}`),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        method: fc.constantFrom(
          'notifications/progress',
          'notifications/message',
          'notifications/resources/updated',
          'notifications/tools/list_changed',
          'notifications/cancelled',
          'notifications/elicitation/complete',
          'x/unknown',
        ),
        params: fc.oneof(
          fc
            .record(
              {
                progressToken: fc.constantFrom('$ID', '$PREV', '$NEXT', '"x"'),
                progress: fc.constantFrom('1', '"1"', 'null'),
                requestId: fc.constantFrom('$ID', '$PREV', '"x"', '{}'),
                uri: fc.constantFrom('"demo://x"', '1', '{"toString":1}'),
                level: fc.constantFrom('"info"', '"debug"', '3'),
                data: value.map(jsonText),
                _meta: fc.constantFrom(
                  '{"io.modelcontextprotocol/subscriptionId":"$ID"}',
                  '{"__proto__":{"x":1}}',
                ),
              },
              { requiredKeys: [] },
            )
            .map(
              (p) =>
                `{${Object.entries(p)
                  .map(([k, v]) => `"${k}":${v}`)
                  .join(',')}}`,
            ),
          value.map(jsonText),
        ),
      })
      .map(({ method, params }) => `{"jsonrpc":"2.0","method":"${method}","params":${params}}`),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        method: fc.constantFrom(
          'elicitation/create',
          'sampling/createMessage',
          'roots/list',
          'ping',
          'tools/list',
        ),
        id: fc.constantFrom('1', '$ID', '"s"', 'null', '{}', '2e308'),
        params: value.map(jsonText),
      })
      .map(
        ({ method, id: asked, params }) =>
          `{"jsonrpc":"2.0","id":${asked},"method":"${method}","params":${params}}`,
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ maxLength: 120 })
      .map((bytes) => Buffer.from(bytes).toString('latin1')),
  },
  { weight: 1, arbitrary: text },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 20_000 })
      .map((n) => `{"jsonrpc":"2.0","id":$ID,"result":{"a":${'['.repeat(n)}${']'.repeat(n)}}}`),
  },
);

/** Tool lists a hostile child may answer tools/list with. */
const toolList: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(
      fc.record(
        {
          name: fc.oneof(fc.constantFrom(...NAMES, 'valueOf', 'hasOwnProperty'), text),
          description: text,
          inputSchema: fc.oneof(fc.constant({ type: 'object' }), value),
          annotations: value,
        },
        { requiredKeys: ['name'] },
      ),
      { maxLength: 5 },
    )
    .map(
      (tools) =>
        `{"tools":${jsonText([...tools, { name: 'emit', inputSchema: { type: 'object' } }])}}`,
    ),
  value.map(jsonText),
  fc.string({ maxLength: 50 }),
);

/** One call of the child-side fuzz: what the child writes before (and as) its answer. */
export interface ChildCase {
  tool: 'emit' | 'list';
  arguments: Record<string, unknown>;
}

const b64 = (s: string): string => Buffer.from(s, 'latin1').toString('base64');

export const childCase: fc.Arbitrary<ChildCase> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record({
        lines: fc.array(
          fc
            .tuple(childLine, fc.constantFrom('\n', '\n', '\n', '\r\n', ''))
            .map(([line, end]) => line + end),
          { maxLength: 6 },
        ),
        answer: fc.option(
          childLine.map((line) => `${line}\n`),
          { nil: undefined, freq: 3 },
        ),
      })
      .map(({ lines, answer }) => ({
        tool: 'emit' as const,
        arguments: {
          lines: lines.map(b64),
          ...(answer === undefined ? {} : { answer: b64(answer) }),
        },
      })),
  },
  {
    weight: 1,
    arbitrary: toolList.map((tools) => ({
      tool: 'list' as const,
      arguments: { tools: b64(tools) },
    })),
  },
);

/** How one case went, as a path key: status, media type, JSON-RPC code, message template. */
export function outcomeOf(status: number | undefined, type: string, body: string): string {
  const code = /"code":(-?\d+)/.exec(body)?.[1] ?? '-';
  const message = /"message":"((?:[^"\\]|\\.)*)"/.exec(body)?.[1] ?? '';
  const template = message
    .replace(/\\"(?:[^"\\]|\\.)*\\"/g, '"…"')
    .replace(/\d+/g, '#')
    .slice(0, 80);
  return `${status ?? 'none'} ${type.split(';')[0] || '-'} ${code} ${template}`;
}

/**
 * Sends `bytes` over a fresh connection; the answer is what came before the server closed it,
 * or before it went quiet for `quietMs` after a first byte (an SSE stream stays open), or
 * before `timeoutMs`.
 */
export async function exchange(
  port: number,
  bytes: Buffer,
  { quietMs = 300, timeoutMs = 4_000 } = {},
): Promise<string> {
  const socket = connectSocket(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let quiet: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    socket.on('close', () => resolve());
    socket.on('error', () => resolve());
  });
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    clearTimeout(quiet);
    quiet = setTimeout(() => socket.destroy(), quietMs);
  });
  socket.on('connect', () => socket.end(bytes));
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  await done;
  clearTimeout(timer);
  clearTimeout(quiet);
  return Buffer.concat(chunks).toString('latin1');
}

/** The outcome of a raw exchange (exchange). */
export function rawOutcome(raw: string): string {
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1];
  const type = /\r\ncontent-type: ([^\r\n]*)/i.exec(raw)?.[1] ?? '';
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return outcomeOf(status === undefined ? undefined : Number(status), type, body);
}

/** Runs `work` over `items`, `concurrency` at a time. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Cases of `arbitrary` from `seed`: the same seed, the same cases. */
export function cases<T>(arbitrary: fc.Arbitrary<T>, seed: number, count: number): T[] {
  return fc.sample(arbitrary, { seed, numRuns: count });
}

// --- running the cases against a real bridge process ------------------------------------------

/** A real `mcp-operator bridge` process under fuzz, with what the checks need. */
export interface FuzzBridge {
  port: number;
  base: string;
  /** How it ended, once it has; undefined while it runs. */
  readonly exit: string | undefined;
  /** Its log lines by level, message and reason (numbers taken out): the branches it logged. */
  readonly logged: Map<string, number>;
  /** Resident memory now, and the most it has held (VmRSS, VmHWM), in bytes. */
  memory(): Promise<{ rss: number; peak: number }>;
  stop(): Promise<void>;
}

const FUZZ_CHILD = fileURLToPath(new URL('./fixtures/fuzz-child.ts', import.meta.url));
const MISBEHAVING = fileURLToPath(new URL('./fixtures/misbehaving-server.ts', import.meta.url));

/** The children fuzzed against: the misbehaving server for the front, the fuzz child for output. */
export const FUZZ_SERVERS = {
  front: [process.execPath, MISBEHAVING],
  child: [process.execPath, FUZZ_CHILD],
};

/** Flags of every fuzzed bridge: short timeouts, so a case that hangs costs little. */
export const FUZZ_FLAGS = [
  '--request-timeout',
  '1s',
  '--idle-timeout',
  '60s',
  '--max-sessions',
  '64',
  '--max-message-bytes',
  '262144',
  '--grace-period',
  '1s',
];

/** Starts `mcp-operator bridge <flags> -- <server>` on `port` and waits until it serves /healthz. */
export async function startFuzzBridge(
  port: number,
  flags: readonly string[],
  server: readonly string[],
): Promise<FuzzBridge> {
  const child = spawn(
    process.execPath,
    [CLI, 'bridge', '--listen', `127.0.0.1:${port}`, ...FUZZ_FLAGS, ...flags, '--', ...server],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const logged = new Map<string, number>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    let entry: { level?: unknown; msg?: unknown; reason?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      entry = { msg: 'a line that is not JSON' };
    }
    const reason = typeof entry.reason === 'string' ? entry.reason : undefined;
    const detail = reason === undefined ? '' : ` (${reason.replace(/\d+/g, '#').slice(0, 60)})`;
    const key = `${String(entry.level)} ${String(entry.msg)}${detail}`;
    logged.set(key, (logged.get(key) ?? 0) + 1);
  });
  let exit: string | undefined;
  const exited = once(child, 'exit').then(([code, signal]) => {
    exit = signal ? `signal ${String(signal)}` : `code ${String(code)}`;
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    'the fuzzed bridge to serve',
    async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200,
    {
      timeoutMs: 60_000,
      abort: () => {
        if (exit !== undefined) throw new Error(`the bridge process ended (${exit})`);
      },
    },
  );
  return {
    port,
    base,
    logged,
    get exit() {
      return exit;
    },
    memory: async () => {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const kb = (field: string) =>
        Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) * 1024;
      return { rss: kb('VmRSS'), peak: kb('VmHWM') };
    },
    stop: async () => {
      if (exit === undefined) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** What a run observed. */
export interface FuzzStats {
  executions: number;
  batches: number;
  /** Distinct outcomes (outcomeOf) and how often each came. */
  outcomes: Map<string, number>;
  /** The bridge process ended, or stopped serving: what and after which batch (seed, index). */
  crashes: string[];
  /** Answers with HTTP 500: a throw the entry guard caught, which is a defect all the same. */
  serverErrors: number;
  /** Resident memory after each batch, in bytes. */
  rssSamples: number[];
  peakRss: number;
}

export const newStats = (): FuzzStats => ({
  executions: 0,
  batches: 0,
  outcomes: new Map(),
  crashes: [],
  serverErrors: 0,
  rssSamples: [],
  peakRss: 0,
});

function record(stats: FuzzStats, outcome: string): void {
  stats.executions++;
  stats.outcomes.set(outcome, (stats.outcomes.get(outcome) ?? 0) + 1);
  if (outcome.startsWith('500 ')) stats.serverErrors++;
}

const JSON_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

async function rpc(
  base: string,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; session: string | null; text: string }> {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...JSON_HEADERS, ...headers },
    body: JSON.stringify(message),
    signal: AbortSignal.timeout(10_000),
  });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    session: response.headers.get('mcp-session-id'),
    text: await response.text(),
  };
}

/** A 2025-11-25 session: initialize and initialized. Its id, or a made-up one when refused. */
export async function openSession(base: string): Promise<string> {
  const init = await rpc(base, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'fuzz', version: '1' },
    },
  });
  if (init.session === null) return 'no-session';
  await rpc(
    base,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'mcp-session-id': init.session },
  );
  return init.session;
}

/**
 * The bridge is up and serves others: /healthz answers, and `session` (one the fuzzer never
 * touched) gets its ping answered. Throws saying what failed.
 */
export async function assertServing(bridge: FuzzBridge, session: string): Promise<void> {
  if (bridge.exit !== undefined) throw new Error(`the bridge process ended (${bridge.exit})`);
  const health = await fetch(`${bridge.base}/healthz`, { signal: AbortSignal.timeout(10_000) });
  if (health.status !== 200) throw new Error(`/healthz answered ${health.status}`);
  const ping = await rpc(
    bridge.base,
    { jsonrpc: '2.0', id: 'health', method: 'ping' },
    {
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-11-25',
    },
  );
  if (ping.status !== 200 || !ping.text.includes('"result":{}'))
    throw new Error(`the other session's ping got HTTP ${ping.status}: ${ping.text.slice(0, 200)}`);
}

export interface BatchOptions {
  seed: number;
  batch: number;
  concurrency: number;
}

/** One batch of the front fuzz against `bridge`; `healthSession` is the untouched session. */
export async function frontBatch(
  bridge: FuzzBridge,
  healthSession: string,
  stats: FuzzStats,
  { seed, batch, concurrency }: BatchOptions,
): Promise<void> {
  const session = await openSession(bridge.base);
  await pool(cases(frontCase, seed, batch), concurrency, async (c) => {
    record(stats, rawOutcome(await exchange(bridge.port, c.build({ session }))));
  });
  await afterBatch(bridge, healthSession, stats, seed);
}

/** One batch of the child-side fuzz: calls through `session` that make the child write its cases. */
export async function childBatch(
  bridge: FuzzBridge,
  session: string,
  healthSession: string,
  stats: FuzzStats,
  { seed, batch, concurrency }: BatchOptions,
): Promise<void> {
  let nextId = 1;
  await pool(cases(childCase, seed, batch), concurrency, async (c) => {
    const call = {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name: c.tool, arguments: c.arguments },
    };
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    const send = (message: unknown) =>
      rpc(bridge.base, message, headers).then(
        (answer) => outcomeOf(answer.status, answer.type, answer.text),
        (error: unknown) => `no answer (${error instanceof Error ? error.name : 'error'})`,
      );
    record(stats, await send(call));
    if (c.tool === 'list')
      record(stats, await send({ jsonrpc: '2.0', id: nextId++, method: 'tools/list' }));
  });
  await afterBatch(bridge, healthSession, stats, seed);
}

async function afterBatch(
  bridge: FuzzBridge,
  healthSession: string,
  stats: FuzzStats,
  seed: number,
): Promise<void> {
  stats.batches++;
  try {
    await assertServing(bridge, healthSession);
    const { rss, peak } = await bridge.memory();
    stats.rssSamples.push(rss);
    stats.peakRss = Math.max(stats.peakRss, peak);
  } catch (error) {
    stats.crashes.push(`seed ${seed}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
