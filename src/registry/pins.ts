/**
 * Whether a package names one exact release. An MCPServer must run the code that was reviewed:
 * a range (`^1.2.3`, `1.x`, `>=1.2`), a dist-tag (`latest`, `next`) or an image without a tag
 * resolves a new release whenever a pod or a session starts, and a new release can change the
 * tools under an approval (the "rug pull"). The registry's schema says the same of `version`
 * ("Must be a specific version. Version ranges are rejected"); this holds every entry to it,
 * whatever the registry it came from checked.
 */

import { isPep440Version } from '../resolved-package.ts';

/** SemVer 2.0.0 (semver.org, the grammar's regular expression), as npm pins a version. */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Why `version` is not one release, in words a reader acts on; undefined when it is one. */
function rangeReason(version: string): string | undefined {
  if (version.trim() === '') return 'it is empty';
  if (/\|\||\s/.test(version)) return 'it is a set of ranges';
  if (/^(==|~=|!=|[<>]=?|=)/.test(version) || /,/.test(version))
    return 'a comparison accepts more than one release';
  if (/^[\^~]/.test(version))
    return `a ${version.startsWith('^') ? 'caret' : 'tilde'} range accepts later releases`;
  if (/(^|\.)[xX*](\.|$)/.test(version) || version === '*') return 'a wildcard accepts any release';
  if (/^[A-Za-z][A-Za-z0-9-]*$/.test(version))
    return `${JSON.stringify(version)} is a tag, which moves to each new release`;
  return undefined;
}

/** Why an npm version is not exact, or undefined. */
export function npmPinProblem(version: string): string | undefined {
  if (SEMVER.test(version)) return undefined;
  return rangeReason(version) ?? 'npm pins a release by its full semantic version, as 1.2.3';
}

/** Why a PyPI version is not exact, or undefined. */
export function pypiPinProblem(version: string): string | undefined {
  if (isPep440Version(version) && !/[*]/.test(version)) return undefined;
  return rangeReason(version) ?? 'PyPI pins a release by its PEP 440 version, as 1.2.3';
}

/** An OCI reference split into its repository, tag and digest. */
export interface ImageReference {
  repository: string;
  tag: string | undefined;
  digest: string | undefined;
}

const DIGEST = /^sha256:[a-f0-9]{64}$/;

/**
 * `host/path[:tag][@sha256:…]`, as the OCI distribution spec names an image. The tag is what
 * follows the last colon after the last slash (a colon before it is a registry's port).
 */
export function parseImage(identifier: string): ImageReference {
  const [name = '', digest] = identifier.split('@', 2);
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const hasTag = colon > slash;
  return {
    repository: hasTag ? name.slice(0, colon) : name,
    tag: hasTag ? name.slice(colon + 1) : undefined,
    digest,
  };
}

/** Why an image reference does not name one image, or undefined. */
export function imagePinProblem(image: ImageReference): string | undefined {
  if (image.digest !== undefined)
    return DIGEST.test(image.digest) ? undefined : 'its digest is not sha256:<64 hex digits>';
  if (image.tag === undefined) return 'an image without a tag or digest is whatever :latest is';
  if (image.tag === 'latest') return 'the tag latest moves to each new image';
  return undefined;
}
