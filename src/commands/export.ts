/**
 * `mcp-operator export [NAME] [-n ns | -A]`: what MCPServers publish (tools, prompts,
 * resources, resource templates) with their digests and approval state, as the JSON document
 * src/registry/export.ts defines (docs/registry.md, docs/export.schema.json), for a registry or
 * catalog to ingest. It reads what the operator recorded (status and the snapshot ConfigMap);
 * it asks no server anything.
 */

import { parseArgs } from 'node:util';
import { registryProvenance } from '../api/registry-provenance.ts';
import { MCP_SERVER, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { readBaseline } from '../discovery/baseline.ts';
import { currentSnapshot } from '../approval/index.ts';
import { driftFrom, driftInputs } from '../discovery/drift-basis.ts';
import type { KubeClient } from '../kube/client.ts';
import { collectionPath, objectPath } from '../kube/resources.ts';
import { type ExportedServer, exportDocument, exportServer } from '../registry/export.ts';
import { CATALOG_KINDS } from '../tools/catalog-items.ts';
import {
  KUBE_OPTIONS,
  PROGRAM,
  UsageError,
  kubeTarget,
  outputOf,
  printed,
  registryCommand,
} from './registry-cli.ts';

const USAGE = `Usage: ${PROGRAM} export [NAME] [-n namespace | -A] [-o json|yaml]

Writes what MCPServers publish — tools, prompts, resources and resource templates — with
their digests and approval state, as one JSON document (kind MCPServerCatalog; its schema is
docs/export.schema.json). NAME: that server; otherwise every one in the namespace (-A: in all).
`;

export const exportCommand = registryCommand('export', USAGE, async (argv) => {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...KUBE_OPTIONS, 'all-namespaces': { type: 'boolean', short: 'A' } },
    allowPositionals: true,
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError('give at most one MCPServer name');
  const output = outputOf(values.output) ?? 'json';
  const { client, namespace, failure } = await kubeTarget(values);
  const name = positionals[0];
  try {
    const servers = await (
      name === undefined
        ? client
            .request<{ items: StoredMCPServer[] }>({
              method: 'GET',
              path: collectionPath(
                MCP_SERVER,
                values['all-namespaces'] === true ? undefined : namespace,
              ),
            })
            .then((list) => list.items)
        : client
            .request<StoredMCPServer>({
              method: 'GET',
              path: objectPath(MCP_SERVER, namespace, name),
            })
            .then((server) => [server])
    ).catch((error: unknown) => {
      throw failure(error, name === undefined ? undefined : { name, namespace });
    });
    const exported: ExportedServer[] = [];
    // One server at a time: each is two reads, and a namespace may hold many.
    for (const server of servers) exported.push(await exportOne(client, server));
    process.stdout.write(printed(exportDocument(exported), output));
    return 0;
  } finally {
    client.close();
  }
});

async function exportOne(client: KubeClient, server: StoredMCPServer): Promise<ExportedServer> {
  const baseline = await readBaseline(client, server);
  const discovered =
    server.status?.discovery?.snapshotDigest !== undefined &&
    server.status.discovery.snapshotConfigMap !== undefined;
  const snapshot = discovered ? await currentSnapshot(client, server) : undefined;
  const inputs = driftInputs(baseline, server);
  const drift =
    snapshot === undefined
      ? undefined
      : driftFrom(snapshot, { ...inputs, approved: inputs.approved ?? [] });
  return exportServer({
    namespace: server.metadata.namespace,
    name: server.metadata.name,
    provenance: registryProvenance(server.metadata.annotations),
    driftPolicy: server.spec.tools?.driftPolicy ?? 'Warn',
    baseline: baseline.kind === 'tools' ? 'approved' : baseline.kind,
    discoveredAt: server.status?.discovery?.lastSuccessTime,
    snapshot,
    drift,
    approvedKinds: CATALOG_KINDS.filter((kind) => inputs.approvedCatalog?.[kind] !== undefined),
  });
}
