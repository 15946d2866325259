/**
 * The package a launcher (`npx`) resolved when a stdio server started, as the supervisor reads
 * it in the server container and status records it (docs/adr/0011). A shared leaf: the bridge's
 * wire format (src/mcp/change-feed.ts) and the API (src/api) both check the same shapes.
 */

/** Launchers whose package the supervisor can tell. */
export const PACKAGE_LAUNCHERS = ['npx'] as const;
export type PackageLauncher = (typeof PACKAGE_LAUNCHERS)[number];

/** Most packages recorded: one command runs one package, a rollout a few versions of it. */
export const PACKAGES_MAX = 8;

/** npm's package names (scoped or not, at most 214 characters), old names' capitals included. */
export const PACKAGE_NAME_PATTERN =
  '^(@[A-Za-z0-9~-][A-Za-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*$';
export const PACKAGE_NAME_MAX = 214;
/** A semver version with its pre-release and build parts. */
export const PACKAGE_VERSION_PATTERN = '^[0-9A-Za-z][0-9A-Za-z.+-]*$';
export const PACKAGE_VERSION_MAX = 64;

/** A package a launcher resolved and ran: `npx @modelcontextprotocol/server-memory 2026.8.31`. */
export interface ResolvedPackage {
  launcher: PackageLauncher;
  name: string;
  version: string;
}

const NAME = new RegExp(PACKAGE_NAME_PATTERN);
const VERSION = new RegExp(PACKAGE_VERSION_PATTERN);

/** A package as `<launcher> <name> <version>`, or undefined when it is not one. */
export function toPackage(
  launcher: unknown,
  name: unknown,
  version: unknown,
): ResolvedPackage | undefined {
  if (!PACKAGE_LAUNCHERS.includes(launcher as PackageLauncher)) return undefined;
  if (typeof name !== 'string' || name.length > PACKAGE_NAME_MAX || !NAME.test(name))
    return undefined;
  if (typeof version !== 'string' || version.length > PACKAGE_VERSION_MAX || !VERSION.test(version))
    return undefined;
  return { launcher: launcher as PackageLauncher, name, version };
}
