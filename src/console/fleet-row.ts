/**
 * One MCPServer as a row of the fleet page: what `kubectl get mcps` shows and what a reviewer
 * sorts by (drift, its worst severity and age, findings, moved code). Pure: the row is
 * computed once per change of the server, not once per page load, so a thousand rows cost a
 * thousand small objects.
 */

import { ConditionType, findCondition } from '../api/v1alpha1/conditions.ts';
import type { DriftStatus } from '../api/v1alpha1/status.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { objectKey } from '../kube/resources.ts';
import { highest } from '../tools/severity.ts';
import type { FleetRow, Severity } from './web/api-types.ts';

export function fleetRow(server: StoredMCPServer): FleetRow {
  const { namespace, name, resourceVersion = '' } = server.metadata;
  const status = server.status;
  const ready = findCondition(status, ConditionType.Ready);
  const drifted = findCondition(status, ConditionType.Drifted);
  const discovery = status?.discovery;
  const drift = status?.drift;
  return {
    key: objectKey(namespace, name),
    namespace,
    name,
    resourceVersion,
    ready: ready === undefined ? undefined : { status: ready.status, reason: ready.reason },
    transport: server.spec.url === undefined ? (server.spec.transport ?? 'stdio') : 'url',
    tools: discovery?.toolCount,
    prompts: discovery?.prompts?.count,
    resources: sum(discovery?.resources?.count, discovery?.resourceTemplates?.count),
    drift: {
      status: drifted?.status ?? 'Unknown',
      reason: drifted?.reason ?? '',
      severity: drift === undefined ? undefined : driftSeverity(drift),
      since: drift?.since,
      added: (drift?.added?.length ?? 0) + catalogCount(drift, 'added'),
      removed: (drift?.removed?.length ?? 0) + catalogCount(drift, 'removed'),
      // A rename is one change (status.drift.renamed), its names in neither added nor removed.
      changed:
        (drift?.changed?.length ?? 0) +
        (drift?.renamed?.length ?? 0) +
        catalogCount(drift, 'changed'),
    },
    findings: discovery?.findingCount ?? 0,
    codeChanged: status?.provenance?.codeChanged,
    lastDiscovery: discovery?.lastSuccessTime,
  };
}

function sum(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
}

const CATALOG = ['prompts', 'resources', 'resourceTemplates'] as const;

function catalogCount(drift: DriftStatus | undefined, list: 'added' | 'removed' | 'changed') {
  return CATALOG.reduce((n, kind) => n + (drift?.[kind]?.[list]?.length ?? 0), 0);
}

/**
 * The worst severity status.drift records, counted as src/tools/drift.ts counts a server's
 * drift for alerting: a removed tool (or prompt, resource) breaks callers, an added one or an
 * invalid name does not.
 */
export function driftSeverity(drift: DriftStatus): Severity | undefined {
  const changed = [
    ...(drift.changed ?? []),
    ...(drift.renamed ?? []),
    ...CATALOG.flatMap((kind) => drift[kind]?.changed ?? []),
  ].map((c) => c.severity);
  const removed = (drift.removed?.length ?? 0) + (drift.missingAllowed?.length ?? 0);
  const lost = removed + catalogCount(drift, 'removed') > 0 ? (['breaking'] as const) : [];
  const added = (drift.added?.length ?? 0) + (drift.invalidNames?.length ?? 0);
  const gained = added + catalogCount(drift, 'added') > 0 ? (['compatible'] as const) : [];
  return highest([...changed, ...lost, ...gained]);
}
