/**
 * A request's arguments as an audit event carries them: always their digest, which proves what
 * was sent without saying it; the values themselves only when spec.audit.arguments asks, and
 * then with secrets taken out unless it asks for them in full.
 */

import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * SHA-256 over the RFC 8785 canonical JSON of the arguments (as digests of tools are made,
 * src/tools/digest.ts): the same arguments give the same digest whatever their key order.
 * Null when there are none.
 */
export function argumentsDigest(value: unknown): string | null {
  if (value === undefined) return null;
  let canonical: string | undefined;
  try {
    canonical = canonicalize(value);
  } catch {
    return null; // not JSON (never from a parsed request; a guard all the same)
  }
  if (canonical === undefined) return null;
  return `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

/** Keys whose values are taken for secrets: the words credentials are named with. */
const SECRET_KEY =
  /pass(word|wd|phrase)?|secret|token|api[-_]?key|auth|credential|cookie|session|private|bearer|signature|jwt|otp|pin$/i;

export const REDACTED = '[redacted]';
/** Deeper than this, values are replaced whole: a bound on the work per event. */
const MAX_DEPTH = 16;

/** A copy of `value` with the value under every secret-looking key replaced by REDACTED. */
export function redacted(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redacted(item, depth + 1));
  // fromEntries defines each key, `__proto__` included, as an own property.
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      SECRET_KEY.test(key) ? REDACTED : redacted(item, depth + 1),
    ]),
  );
}
