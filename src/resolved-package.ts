/**
 * The package a launcher (`npx`, `uvx`) resolved when a stdio server started, as the supervisor
 * reads it in the server container and status records it (docs/adr/0011). A shared leaf: the
 * bridge's wire format (src/mcp/change-feed.ts) and the API (src/api) both check the same
 * shapes.
 */

/** Launchers whose package the supervisor can tell: npm's `npx` and uv's `uvx` (PyPI). */
export const PACKAGE_LAUNCHERS = ['npx', 'uvx'] as const;
export type PackageLauncher = (typeof PACKAGE_LAUNCHERS)[number];

/** Most packages recorded: one command runs one package, a rollout a few versions of it. */
export const PACKAGES_MAX = 8;

/**
 * Any launcher's package name, as the API bounds it: npm's names (scoped or not, at most 214
 * characters, old names' capitals included), which hold PyPI's normalized names too.
 */
export const PACKAGE_NAME_PATTERN =
  '^(@[A-Za-z0-9~-][A-Za-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*$';
export const PACKAGE_NAME_MAX = 214;
/**
 * Any launcher's version, as the API bounds it: the characters of a semver version with its
 * pre-release and build parts, and of a PEP 440 version (`!` of an epoch, `_` of a local part).
 */
export const PACKAGE_VERSION_PATTERN = '^[0-9A-Za-z][0-9A-Za-z.+!_-]*$';
export const PACKAGE_VERSION_MAX = 64;

/** A package a launcher resolved and ran: `npx @modelcontextprotocol/server-memory 2026.8.31`. */
export interface ResolvedPackage {
  launcher: PackageLauncher;
  name: string;
  version: string;
}

/** The shapes each launcher's registry allows, checked before a package is believed. */
const SHAPES: Record<PackageLauncher, { name: RegExp; version: RegExp }> = {
  npx: {
    name: new RegExp(PACKAGE_NAME_PATTERN),
    version: /^[0-9A-Za-z][0-9A-Za-z.+-]*$/,
  },
  uvx: {
    // PEP 503's normalized form (lowercase, each run of `-_.` one `-`), which the supervisor
    // writes: one project has one name however its METADATA spells it.
    name: /^[a-z0-9]+(-[a-z0-9]+)*$/,
    // PEP 440's grammar (its Appendix B), as core metadata may hold it before normalization.
    version:
      /^([0-9]+!)?[0-9]+(\.[0-9]+)*([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?(-[0-9]+|[-_.]?(post|rev|r)[-_.]?[0-9]*)?([-_.]?dev[-_.]?[0-9]*)?(\+[a-z0-9]+([-_.][a-z0-9]+)*)?$/i,
  },
};

/** Whether `version` is one exact PEP 440 version (as uvx pins one with `name@version`). */
export function isPep440Version(version: string): boolean {
  return version.length <= PACKAGE_VERSION_MAX && SHAPES.uvx.version.test(version);
}

const isLauncher = (launcher: unknown): launcher is PackageLauncher =>
  PACKAGE_LAUNCHERS.includes(launcher as PackageLauncher);

/** A package as `<launcher> <name> <version>`, or undefined when it is not one. */
export function toPackage(
  launcher: unknown,
  name: unknown,
  version: unknown,
): ResolvedPackage | undefined {
  if (!isLauncher(launcher)) return undefined;
  const shape = SHAPES[launcher];
  if (typeof name !== 'string' || name.length > PACKAGE_NAME_MAX || !shape.name.test(name))
    return undefined;
  if (
    typeof version !== 'string' ||
    version.length > PACKAGE_VERSION_MAX ||
    !shape.version.test(version)
  )
    return undefined;
  return { launcher, name, version };
}
