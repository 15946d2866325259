/**
 * Starts the audit trail a bridge was asked for: where its events go, and what counts the ones
 * that could not be written (docs/audit.md).
 */

import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { BridgeMetrics } from '../metrics.ts';
import type { ArgumentMode } from './event.ts';
import { lineSink, type AuditSink } from './sink.ts';
import { AuditTrail, type AuditConfig } from './trail.ts';

export interface AuditOptions {
  arguments: ArgumentMode;
  /** The MCPServer served, named in every event. */
  server?: { namespace: string; name: string } | undefined;
  /** A file descriptor or a file; by default stdout. */
  destination?: number | string;
  /** What may wait to be written; by default AUDIT_BUFFER_BYTES (sink.ts). */
  bufferBytes?: number;
}

export function startAuditTrail(
  audit: AuditOptions,
  context: {
    logger: Logger;
    metrics: BridgeMetrics;
    /** What clients must present: an OAuth access token, the bridge's bearer token, nothing. */
    credential: AuditConfig['credential'];
    /** Sends the events somewhere else too (OTLP log records, telemetry.ts). */
    alsoTo?: ((sink: AuditSink) => AuditSink) | undefined;
  },
): AuditTrail {
  const { logger, metrics } = context;
  const lines = lineSink({
    destination: audit.destination ?? 1,
    ...(audit.bufferBytes === undefined ? {} : { bufferBytes: audit.bufferBytes }),
    onDrop: () => metrics.auditDropped.inc(),
    onError: (error) =>
      logger.error({ err: error }, 'cannot write audit events: they are dropped and counted'),
  });
  const sink = context.alsoTo ? context.alsoTo(lines) : lines;
  return new AuditTrail(
    {
      ...(audit.server && { server: audit.server }),
      // In a pod the host name is the pod's name.
      pod: hostname(),
      credential: context.credential,
      arguments: audit.arguments,
    },
    sink,
  );
}
