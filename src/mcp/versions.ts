/**
 * The MCP protocol revisions the operator speaks, one list for the bridge and for discovery.
 * 2026-07-28 dropped the initialize handshake and sessions: each request carries its version
 * and capabilities in `_meta` (2026-07-28 changelog, major changes 1-2). The older revisions
 * negotiate the version in `initialize` (2025-11-25 basic/lifecycle).
 */

/** The stateless revision. */
export const STATELESS_VERSION = '2026-07-28';

/** The newest revision with the initialize handshake: the one a client offers. */
export const LATEST_HANDSHAKE_VERSION = '2025-11-25';

/** Revisions with the initialize handshake, newest first. */
export const HANDSHAKE_VERSIONS: readonly string[] = [
  LATEST_HANDSHAKE_VERSION,
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
];

/** Every revision, newest first (`supportedVersions` of server/discover, error data). */
export const SUPPORTED_VERSIONS: readonly string[] = [STATELESS_VERSION, ...HANDSHAKE_VERSIONS];

/**
 * The version to answer a session with when the child already speaks `childVersion` (a shared
 * child is initialized once): the one asked for when it is a handshake revision not newer than
 * the child's, else the child's (2025-11-25 basic/lifecycle, "Version Negotiation": the server
 * answers with the requested version if it supports it, else with another one it supports).
 */
export function sessionVersion(requested: unknown, childVersion: unknown): unknown {
  const known = typeof requested === 'string' && HANDSHAKE_VERSIONS.includes(requested);
  return known && typeof childVersion === 'string' && requested <= childVersion
    ? requested
    : childVersion;
}
