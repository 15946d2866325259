/**
 * What a server's drift is computed against: the approved baseline (tools, prompts, resources
 * and resource templates) and the allowlist. A discovery run computes drift while its full
 * snapshot is at hand and keeps it with the digest of these inputs (`driftBasis`), so that the
 * status computation can tell whether that drift still answers the spec as it is now.
 */
import { createHash } from 'node:crypto';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import type { Baseline, BaselineTool, CatalogBaseline } from '../tools/baseline.ts';
import type { Catalog } from '../tools/catalog-items.ts';
import { type Drift, computeDrift } from '../tools/drift.ts';
import type { SnapshotTool } from '../tools/snapshot.ts';

export interface DriftInputs {
  approved: readonly BaselineTool[] | undefined;
  approvedCatalog: CatalogBaseline | undefined;
  allow: readonly string[];
}

/** An invalid baseline approves nothing; callers report it before they compare. */
export function driftInputs(
  baseline: Baseline,
  server: Pick<StoredMCPServer, 'spec'>,
): DriftInputs {
  return {
    approved: baseline.kind === 'tools' ? baseline.tools : undefined,
    approvedCatalog: baseline.kind === 'tools' ? baseline.catalog : undefined,
    allow: server.spec.tools?.allow ?? [],
  };
}

/** The inputs as a digest: equal digests, equal drift for the same snapshot. */
export function driftBasis({ approved, approvedCatalog, allow }: DriftInputs): string {
  return createHash('sha256')
    .update(JSON.stringify([approved ?? null, allow, approvedCatalog ?? null]))
    .digest('base64');
}

/** The drift of what a server listed against the inputs. */
export function driftFrom(
  listed: { tools: readonly SnapshotTool[]; catalog: Catalog },
  { approved, approvedCatalog, allow }: DriftInputs,
): Drift {
  return computeDrift(listed.tools, approved, allow, {
    listed: listed.catalog,
    approved: approvedCatalog,
  });
}
