/**
 * What the commands (controller, bridge, the review commands) share about flags: the parsers of
 * their values, one wording for every invalid value (MCPOP_INVALID_FLAG) and unknown flag
 * (MCPOP_UNKNOWN_FLAG), and the table each command describes its flags in, from which its
 * `--help` and docs/configuration.md are generated.
 */
import { closestMatch } from 'leven';
import { parseDuration } from './duration.ts';
import { type OperatorError, operatorError } from './errors.ts';

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

/**
 * One command-line flag as people read it: `--help` and docs/configuration.md are both
 * generated from these, so the two say the same.
 */
export interface FlagSpec {
  /** As typed: `--listen`. */
  flag: string;
  /** What it takes: `host:port`, `duration`, `integer`, `path`, … */
  type: string;
  /** What it does. */
  meaning: string;
  /** The default as typed; none when it has none. */
  default?: string | undefined;
  /** The environment variable read when the flag is not given. */
  env?: string | undefined;
}

/** pino's levels, which --log-level accepts. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function logLevelFlag(flag: string, text: string): string {
  if (!(LOG_LEVELS as readonly string[]).includes(text))
    throw operatorError(
      'MCPOP_INVALID_FLAG',
      flag,
      `'${text}' is not one of ${LOG_LEVELS.join(', ')}`,
    );
  return text;
}

/** `host:port` (a bracketed IPv6 host, or none: every address) with a port from 0 to 65535. */
export function hostPortFlag(flag: string, text: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(text);
  if (!match) throw operatorError('MCPOP_INVALID_FLAG', flag, `'${text}' is not host:port`);
  const port = Number(match[2]);
  if (port > 65_535)
    throw operatorError('MCPOP_INVALID_FLAG', flag, `port ${match[2]} is not from 0 to 65535`);
  return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port };
}

const HELP_WIDTH = 100;

/** Words of `text` in lines of at most `width` characters. */
function wrapped(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return line === '' ? lines : [...lines, line];
}

/** The flags as `--help` lists them: flag and type, then the meaning, default and variable. */
export function flagHelp(flags: readonly FlagSpec[]): string {
  const heads = flags.map(({ flag, type }) => `  ${flag} ${type}`);
  const width = Math.max(...heads.map((head) => head.length)) + 2;
  return flags
    .flatMap(({ meaning, default: byDefault, env }, i) => {
      const notes = [
        byDefault === undefined || byDefault === '' ? '' : `default ${byDefault}`,
        env === undefined ? '' : `$${env}`,
      ].filter((note) => note !== '');
      const text = notes.length === 0 ? meaning : `${meaning} (${notes.join('; ')})`;
      const [first = '', ...rest] = wrapped(text, Math.max(40, HELP_WIDTH - width));
      const head = heads[i]!;
      return head.length + 2 > width
        ? [head, ...[first, ...rest].map((line) => `${' '.repeat(width)}${line}`)]
        : [`${head.padEnd(width)}${first}`, ...rest.map((line) => `${' '.repeat(width)}${line}`)];
    })
    .join('\n');
}

/** The flags as a Markdown table, for docs/configuration.md. */
export function flagTable(flags: readonly FlagSpec[]): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const code = (text: string | undefined) =>
    text === undefined || text === '' ? '' : `\`${cell(text)}\``;
  return [
    '| Flag | Meaning | Type | Default | Environment variable |',
    '| --- | --- | --- | --- | --- |',
    ...flags.map(
      (f) =>
        `| \`${f.flag}\` | ${cell(f.meaning)} | ${cell(f.type)} | ${code(f.default)} | ${code(f.env)} |`,
    ),
  ].join('\n');
}

/**
 * Node's parseArgs refusal (an unknown flag, a missing value, a stray argument) in our words:
 * its own text advises a quoting that does not apply. `known` are the flags the command takes.
 */
export function argumentError(error: unknown, known: readonly string[]): OperatorError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) return undefined;
  const message = (error as Error).message;
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = quoted.split('=')[0]!;
    const near = closestMatch(flag, [...known], { maxDistance: Math.max(2, flag.length / 3) });
    return operatorError('MCPOP_UNKNOWN_FLAG', flag, near);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = quoted.split(' ')[0]!;
    const takesNone = / does not take an argument/.test(message);
    return operatorError(
      'MCPOP_INVALID_FLAG',
      flag,
      takesNone ? 'it takes no value' : 'it needs a value',
    );
  }
  return operatorError('MCPOP_UNEXPECTED_ARGUMENT', quoted);
}
