/**
 * Parsers for command-line flag values shared by the commands (controller, bridge): one wording
 * for every invalid value, under the MCPOP_INVALID_FLAG code.
 */
import { parseDuration } from './duration.ts';
import { operatorError } from './errors.ts';

/** An integer of at least `min`; `flag` is the flag as typed, e.g. `--max-sessions`. */
export function integerFlag(flag: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min)
    throw operatorError('MCPOP_INVALID_FLAG', flag, `'${text}' is not an integer >= ${min}`);
  return n;
}

/** A positive Go-style duration (`30s`, `5m`, `1h30m`) in milliseconds. */
export function durationFlag(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0)
    throw operatorError(
      'MCPOP_INVALID_FLAG',
      flag,
      `'${text}' is not a duration such as 30s or 5m`,
    );
  return ms;
}
