/**
 * Protocol revisions of the handshake era, and the one a session speaks (2025-11-25
 * basic/lifecycle, "Version Negotiation": the server answers with the version the client asked
 * for if it supports it, else with another one it supports, its latest).
 */

/** Revisions that use the `initialize` handshake and sessions, newest first. */
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

/**
 * The version to answer a session with when the child already speaks `childVersion` (a shared
 * child is initialized once): the one asked for when the bridge knows it and it is not newer
 * than the child's, else the child's.
 */
export function sessionVersion(requested: unknown, childVersion: unknown): unknown {
  const known = typeof requested === 'string' && LEGACY_VERSIONS.includes(requested);
  return known && typeof childVersion === 'string' && requested <= childVersion
    ? requested
    : childVersion;
}
