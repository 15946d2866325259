/**
 * Defaults of MCPServer v1alpha1. Fields whose default is the same for every server are
 * defaulted by the API server (they appear in `kubectl get -o yaml`); fields that only apply to
 * some servers (a url server has no port, replicas or bridge) are defaulted by the renderer
 * from these same values, so that a CEL rule can still refuse them where they do not apply.
 */

import { DEFAULT_FINDING_ALARM_LEVEL } from '../../tool-record.ts';

export const DEFAULTS = {
  port: 8080,
  path: '/mcp',
  replicas: 1,
  readOnlyRootFilesystem: true,
  bridge: {
    sessionMode: 'PerSession',
    maxSessions: 64,
    warmPool: 0,
    idleTimeout: '15m',
    requestTimeout: '5m',
    auditArguments: 'None',
    /** Where the bridge listens in front of a streamable-http server (proxy mode). */
    proxyPort: 8099,
  },
  discovery: { enabled: true, interval: '5m', timeout: '30s' },
  driftPolicy: 'Warn',
  textFindingAlarmLevel: DEFAULT_FINDING_ALARM_LEVEL,
  authKey: 'token',
  approvedKey: 'tools.yaml',
} as const;
