/**
 * Go-style durations (`30s`, `5m`, `1h30m`, `250ms`), the form Kubernetes APIs and flags use
 * and the form the MCPServer CRD validates with DURATION_PATTERN (src/api/schema.ts). One
 * parser for every flag and spec field that holds one.
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const WHOLE = /^(?:\d+(?:\.\d+)?(?:ns|us|ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)/g;

/** Milliseconds in `text`, or undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  if (!WHOLE.test(text)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(PART)) ms += Number(amount) * UNIT_MS[unit!]!;
  return ms;
}
