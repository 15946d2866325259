/**
 * The values a server.json entry asks for (environment variables, arguments, headers, URL
 * variables), resolved from what the user gave on the command line, the entry's fixed values
 * and its defaults. Pure. Everything required and not given is collected, so that one run
 * lists all of it instead of stopping at the first.
 */

import { shown } from '../tools/text.ts';
import type { Input } from './server-json.ts';

/** What the user gave, by the name the entry declares: `--env`, `--arg`, `--header`. */
export interface GivenInputs {
  env: ReadonlyMap<string, readonly string[]>;
  args: ReadonlyMap<string, readonly string[]>;
  headers: ReadonlyMap<string, readonly string[]>;
}

/** Collects what is missing and which given names were used, across one entry. */
export class InputLedger {
  readonly missing: string[] = [];
  readonly notes: string[] = [];
  private readonly used = new Set<string>();
  readonly given: GivenInputs;

  constructor(given: GivenInputs) {
    this.given = given;
  }

  /** The values given for `name` under `kind`, marked as used. */
  take(kind: keyof GivenInputs, name: string): readonly string[] | undefined {
    const values = this.given[kind].get(name);
    if (values !== undefined) this.used.add(`${kind}:${name}`);
    return values;
  }

  /** Names given that the entry does not declare: most likely a typo. */
  unused(): string[] {
    const flags: Record<keyof GivenInputs, string> = {
      env: '--env',
      args: '--arg',
      headers: '--header',
    };
    return (Object.keys(flags) as (keyof GivenInputs)[]).flatMap((kind) =>
      [...this.given[kind].keys()]
        .filter((name) => !this.used.has(`${kind}:${name}`))
        .map((name) => `${flags[kind]} ${name}`),
    );
  }
}

/** `{name}` in a value: a variable the value's `variables` declares. */
const VARIABLE = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;

/**
 * The value(s) of one input: the given ones (checked against `choices`), else its fixed
 * `value`, else its default; its `{variables}` filled in. Undefined when it is optional and has
 * none; `label` names it in the missing list, `kind`/`key` say how the user gives it.
 */
export function resolveInput(
  ledger: InputLedger,
  input: Input & { variables?: Record<string, Input> },
  label: string,
  kind: keyof GivenInputs,
  key: string,
): string[] | undefined {
  const given = ledger.take(kind, key);
  let values: readonly string[] | undefined;
  if (input.value !== undefined) {
    // "If a value is set, it should not be configurable by end users" (server.json schema).
    if (given !== undefined)
      ledger.notes.push(`${label} is fixed by the entry; the value given was not used`);
    values = [input.value];
  } else if (given !== undefined) {
    const outside = given.filter((v) => input.choices !== undefined && !input.choices.includes(v));
    if (outside.length > 0) {
      ledger.missing.push(
        `${label}: ${JSON.stringify(outside[0])} is not one of ${input.choices!.join(', ')}`,
      );
      return undefined;
    }
    values = given;
  } else if (input.default !== undefined) {
    values = [input.default];
  } else {
    if (input.isRequired === true)
      ledger.missing.push(`${label}${describe(input)}: give ${flagFor(kind)} ${key}=VALUE`);
    return undefined;
  }
  return values.map((value) => fillVariables(ledger, value, input.variables ?? {}, label));
}

function fillVariables(
  ledger: InputLedger,
  value: string,
  variables: Record<string, Input>,
  label: string,
): string {
  return value.replace(VARIABLE, (whole, name: string) => {
    const variable = variables[name];
    // "If an identifier in braces is not found in variables … should remain unchanged."
    if (variable === undefined) return whole;
    const filled = resolveInput(ledger, variable, `variable {${name}} of ${label}`, 'args', name);
    return filled?.[0] ?? '';
  });
}

function flagFor(kind: keyof GivenInputs): string {
  return kind === 'env' ? '--env' : kind === 'args' ? '--arg' : '--header';
}

/** ` (what it is)`, from the entry's description: the publisher's text, visible and bounded. */
export function describe(input: Input): string {
  const text = input.description?.replace(/\s+/g, ' ').trim();
  return text ? ` (${shown(text, 100)})` : '';
}
