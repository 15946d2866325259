/**
 * The OpenTelemetry SDK of one bridge: spans and audit log records, exported over OTLP/HTTP
 * (docs/telemetry.md). Started only when an OTLP endpoint is configured; server.ts imports
 * this module only then, so a bridge without one loads no SDK and starts no span.
 *
 * Each signal has a bounded queue (the SDK's batch processors): with the backend down or slow,
 * what does not fit is dropped and requests go on at the same pace. The exporters read the
 * standard OTEL_EXPORTER_OTLP_* variables themselves (headers, timeouts, per-signal endpoints).
 */

import {
  createNoopMeter,
  diag,
  DiagLogLevel,
  SeverityNumber,
  type AnyValue,
  type Attributes,
  type Counter,
  type DiagLogger,
  type Meter,
  type MeterProvider,
  type MetricOptions,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { AUDIT_MARKER, AUDIT_VERSION } from './event.ts';
import type { AuditSink } from './sink.ts';
import { RequestSpans } from './spans.ts';

/** The instrumentation scope of the bridge's spans and log records. */
const SCOPE = 'mcp-operator-bridge';

/** Spans and log records that may wait for export, per signal; more are dropped. */
const QUEUE_MAX = 2048;

export interface TelemetryOptions {
  /**
   * The OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT's meaning): `/v1/traces` and `/v1/logs`
   * are appended.
   */
  endpoint: string;
  /** The share of new traces recorded (0..1); a client's sampled flag decides for its own. */
  samplingRatio: number;
  /** The MCPServer served: the resource's service name and namespace. */
  server?: { namespace: string; name: string } | undefined;
  /** The pod's name (k8s.pod.name). */
  pod?: string | undefined;
  logger: Logger;
  /** Called for spans and log records that were dropped: a full queue, a failed export. */
  onDropped?: (signal: TelemetrySignal, reason: DropReason, count: number) => void;
}

export type TelemetrySignal = 'traces' | 'logs';
export type DropReason = 'queue_full' | 'export_failed';

export interface Telemetry {
  spans: RequestSpans;
  /** `sink` with each audit line also sent as an OTLP log record. */
  readonly auditSink: (sink: AuditSink) => AuditSink;
  /** Exports what is queued (bounded by the exporters' timeouts) and stops. */
  shutdown(): Promise<void>;
}

export function startTelemetry(options: TelemetryOptions): Telemetry {
  const { endpoint, logger } = options;
  // The SDK reports export failures and dropped spans through its diagnostic logger.
  diag.setLogger(diagToPino(logger), {
    logLevel: DiagLogLevel.WARN,
    suppressOverrideMessage: true,
  });
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({
        [ATTR_SERVICE_NAME]: options.server?.name ?? 'mcp-operator-bridge',
        ...(options.server && { 'service.namespace': options.server.namespace }),
        ...(options.server && { 'k8s.namespace.name': options.server.namespace }),
        ...(options.pod !== undefined && { 'k8s.pod.name': options.pod }),
      }),
    )
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win, as everywhere in OpenTelemetry.
    .merge(detectResources({ detectors: [envDetector] }));
  const base = endpoint.replace(/\/+$/, '');
  const tracerProvider = new TracerProvider({
    resource,
    sampler: new ParentBasedSampler({
      root: new TraceIdRatioBasedSampler(options.samplingRatio),
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${base}/v1/traces` }),
        maxQueueSize: QUEUE_MAX,
        selfObsMeterProvider: dropCounter('traces', options.onDropped),
      }),
    ],
  });
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [
      new BatchLogRecordProcessor({
        exporter: new OTLPLogExporter({ url: `${base}/v1/logs` }),
        maxQueueSize: QUEUE_MAX,
        selfObsMeterProvider: dropCounter('logs', options.onDropped),
      }),
    ],
  });
  const tracer = tracerProvider.getTracer(SCOPE);
  const auditLogger = loggerProvider.getLogger(SCOPE);
  logger.info(
    { endpoint: base, samplingRatio: options.samplingRatio },
    'exporting traces and audit events over OTLP',
  );

  return {
    spans: new RequestSpans(tracer, new W3CTraceContextPropagator()),
    auditSink: (sink) => ({
      write(line) {
        sink.write(line);
        // The event as a structured body, with the marker as an attribute, so a pipeline
        // selects audit records the way it selects the JSON lines (docs/audit.md).
        auditLogger.emit({
          eventName: 'mcp_operator.audit',
          severityNumber: SeverityNumber.INFO,
          severityText: 'INFO',
          body: JSON.parse(line) as AnyValue,
          attributes: { [AUDIT_MARKER]: AUDIT_VERSION },
        });
      },
      close: () => sink.close(),
    }),
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), loggerProvider.shutdown()]);
      diag.disable();
    },
  };
}

/**
 * What the SDK's processors count of themselves (`otel.sdk.processor.{span,log}.processed`,
 * with `error.type` for what did not reach the backend), turned into `onDropped` calls. Every
 * other instrument is the SDK's no-op one: no metrics SDK is started for this.
 */
function dropCounter(
  signal: TelemetrySignal,
  onDropped: TelemetryOptions['onDropped'],
): MeterProvider | undefined {
  if (!onDropped) return undefined;
  const processed = `otel.sdk.processor.${signal === 'traces' ? 'span' : 'log'}.processed`;
  const noop = createNoopMeter();
  const counter: Counter = {
    add(count: number, attributes?: Attributes) {
      const type = attributes?.['error.type'];
      if (type === undefined) return;
      onDropped(signal, type === 'queue_full' ? 'queue_full' : 'export_failed', count);
    },
  };
  const meter: Meter = Object.create(noop, {
    createCounter: {
      value: (name: string, options?: MetricOptions) =>
        name === processed ? counter : noop.createCounter(name, options),
    },
  }) as Meter;
  return { getMeter: () => meter };
}

/** The SDK's diagnostics as the bridge's log lines: warnings and errors only. */
function diagToPino(logger: Logger): DiagLogger {
  const child = logger.child({ component: 'opentelemetry' });
  return {
    error: (message) => child.error(message),
    warn: (message) => child.warn(message),
    info: () => undefined,
    debug: () => undefined,
    verbose: () => undefined,
  };
}
