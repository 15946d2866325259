/**
 * Jaeger v2 (built from its Go module by test/cluster/build.ts) as a local process on loopback:
 * the trace backend of the tracing tests. It receives OTLP/HTTP, keeps traces in memory and
 * answers its query API (api_v3, OTLP JSON). Log records go through a logs pipeline of the same
 * collector to its debug exporter, which writes each record, body and attributes, to its log:
 * that is how a test reads what it received of them. No mock receiver.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinaries } from '../cluster/build.ts';
import {
  forgetDirectory,
  removeOnExit,
  startProcess,
  stopProcess,
  type ManagedProcess,
} from '../cluster/processes.ts';
import { freePorts } from './ports.ts';
import { waitFor } from './wait.ts';

/** A span as api_v3 returns it (OTLP JSON), with the service of its resource. */
export interface StoredSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status?: { code?: number; message?: string };
  attributes: Record<string, string | number | boolean>;
}

/** The collector's configuration: no port but the three it is given, all on loopback. */
function config(ports: { otlp: number; http: number; grpc: number }): string {
  return `
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
    logs:
      receivers: [otlp]
      exporters: [debug]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.http}
    grpc:
      endpoint: 127.0.0.1:${ports.grpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
  debug:
    verbosity: detailed
`;
}

export class Jaeger {
  /** The OTLP/HTTP base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  readonly otlpUrl: string;
  readonly #queryUrl: string;
  readonly #process: ManagedProcess;
  readonly #dir: string;

  private constructor(otlpUrl: string, queryUrl: string, process: ManagedProcess, dir: string) {
    this.otlpUrl = otlpUrl;
    this.#queryUrl = queryUrl;
    this.#process = process;
    this.#dir = dir;
  }

  static async start(): Promise<Jaeger> {
    const { jaeger: binary } = await ensureBinaries(['jaeger']);
    const dir = await mkdtemp(join(tmpdir(), 'mcp-operator-jaeger-'));
    removeOnExit(dir);
    const ports = await freePorts(['otlp', 'http', 'grpc']);
    const configFile = join(dir, 'config.yaml');
    await writeFile(configFile, config(ports));
    const process = startProcess({
      name: 'jaeger',
      command: binary,
      args: ['--config', configFile],
      logFile: join(dir, 'jaeger.log'),
      env: { PATH: globalThis.process.env.PATH },
    });
    const jaeger = new Jaeger(
      `http://127.0.0.1:${ports.otlp}`,
      `http://127.0.0.1:${ports.http}`,
      process,
      dir,
    );
    try {
      await waitFor(
        'Jaeger to answer its query API and take OTLP',
        async () => {
          if (process.exit !== undefined) throw new Error(`jaeger exited; see ${process.logFile}`);
          const [query, otlp] = await Promise.all([
            fetch(`${jaeger.#queryUrl}/api/v3/services`).catch(() => undefined),
            fetch(`${jaeger.otlpUrl}/v1/traces`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: '{}',
            }).catch(() => undefined),
          ]);
          return query?.ok && otlp?.ok ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
    } catch (error) {
      await jaeger.stop();
      throw error;
    }
    return jaeger;
  }

  /** The spans of a trace, once it holds at least `count` of them. */
  async trace(traceId: string, count: number): Promise<StoredSpan[]> {
    let spans: StoredSpan[] = [];
    await waitFor(
      `${count} spans of trace ${traceId} in Jaeger`,
      async () => {
        const response = await fetch(`${this.#queryUrl}/api/v3/traces/${traceId}`);
        if (response.status === 404) return undefined;
        if (!response.ok) throw new Error(`api_v3 traces: HTTP ${response.status}`);
        spans = spansOf(await response.json());
        return spans.length >= count ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    return spans;
  }

  /** What the collector wrote of the log records it received (its debug exporter). */
  async receivedLogs(): Promise<string> {
    return readFile(this.#process.logFile, 'utf8');
  }

  async stop(): Promise<void> {
    await stopProcess(this.#process, 10_000);
    await rm(this.#dir, { recursive: true, force: true });
    forgetDirectory(this.#dir);
  }
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpTraces {
  result?: {
    resourceSpans?: {
      resource?: { attributes?: OtlpAttribute[] };
      scopeSpans?: {
        spans?: (Omit<StoredSpan, 'attributes' | 'service'> & { attributes?: OtlpAttribute[] })[];
      }[];
    }[];
  };
}

function spansOf(body: unknown): StoredSpan[] {
  const spans: StoredSpan[] = [];
  for (const resourceSpans of (body as OtlpTraces).result?.resourceSpans ?? []) {
    const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          ...span,
          service: String(service),
          attributes: attributesOf(span.attributes),
        });
      }
    }
  }
  return spans;
}

function attributesOf(attributes: OtlpAttribute[] = []): Record<string, string | number | boolean> {
  return Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue === undefined ? undefined : Number(value.intValue)) ??
        value.boolValue ??
        value.doubleValue ??
        '',
    ]),
  );
}
