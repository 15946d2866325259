/**
 * Whether a URI is one an RFC 6570 URI Template can expand to: how the bridge's policy tells
 * which resource templates a `resources/read` URI belongs to (MCP 2025-11-25 server/resources,
 * "Resource Templates": `uriTemplate` is an RFC 6570 template).
 *
 * The question is yes or no, never which values the variables had, so each expression stands
 * for the characters its expansion may contain (RFC 6570 §3.2.1 and the table of Appendix A):
 * unreserved characters and percent-encodings for every operator, the reserved set as well for
 * `+` and `#`, and the separators the operator writes between values (`,` and `=` of lists and
 * exploded pairs, `/` for path segments, `;`, `&`). A simple `{id}` thus never matches across a
 * `/`, `?` or `#`. An expression whose variables are all undefined expands to nothing, operator
 * included.
 *
 * Matching runs the template as a finite automaton over the URI, one step per character: time
 * linear in the URI's length times the template's, whatever either holds. (Backtracking
 * matchers take exponential time on templates such as `x://{a}{b}{c}`, and both the template
 * and the URI come from outside the bridge.)
 */

/** RFC 3986 §2.3 unreserved characters, and `%` of a percent-encoding (§2.1). */
const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%';
/** RFC 3986 §2.2 reserved characters. */
const RESERVED = ":/?#[]@!$&'()*+,;=";

/** Per operator (RFC 6570 Appendix A): what the expansion starts with, and what it may hold. */
const OPERATORS: Record<string, { first: string; allowed: string }> = {
  '': { first: '', allowed: `${UNRESERVED},=` },
  '+': { first: '', allowed: UNRESERVED + RESERVED },
  '#': { first: '#', allowed: UNRESERVED + RESERVED },
  '.': { first: '.', allowed: `${UNRESERVED},=` },
  '/': { first: '/', allowed: `${UNRESERVED}/,=` },
  ';': { first: ';', allowed: `${UNRESERVED};,=` },
  '?': { first: '?', allowed: `${UNRESERVED}&,=` },
  '&': { first: '&', allowed: `${UNRESERVED}&,=` },
};

/** RFC 6570 §2.3: varchar, varname (with its `:max-length` or `*` modifier), variable-list. */
const VARCHAR = '(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})';
const VARSPEC = `${VARCHAR}(?:\\.?${VARCHAR})*(?::[1-9][0-9]{0,3}|\\*)?`;
const VARIABLE_LIST = new RegExp(`^${VARSPEC}(?:,${VARSPEC})*$`);

/**
 * One state of the automaton. `char`: the next character must be `code`. `loop`: any number of
 * characters of `allowed`, then on. `optional`: either `code` and the loop after it, or neither.
 */
type State =
  | { kind: 'char'; code: number }
  | { kind: 'loop'; allowed: Uint8Array }
  | { kind: 'optional'; code: number };

/** A compiled template: whether a URI is one of its expansions. */
export type UriTemplateMatcher = (uri: string) => boolean;

function charSet(chars: string): Uint8Array {
  const set = new Uint8Array(128);
  for (const char of chars) set[char.charCodeAt(0)] = 1;
  return set;
}

const SETS = new Map(Object.entries(OPERATORS).map(([op, { allowed }]) => [op, charSet(allowed)]));

function expressionStates(expression: string): State[] | undefined {
  const op = expression[0] !== undefined && '+#./;?&'.includes(expression[0]) ? expression[0] : '';
  if (!VARIABLE_LIST.test(expression.slice(op.length))) return undefined;
  const loop: State = { kind: 'loop', allowed: SETS.get(op)! };
  const { first } = OPERATORS[op]!;
  return first === '' ? [loop] : [{ kind: 'optional', code: first.charCodeAt(0) }, loop];
}

/**
 * Compiles a URI template; undefined when it is not one (an unclosed `{`, an operator RFC 6570
 * reserves, a malformed variable), which then matches nothing.
 */
export function compileUriTemplate(template: string): UriTemplateMatcher | undefined {
  const states: State[] = [];
  for (let i = 0; i < template.length; i++) {
    if (template[i] !== '{') {
      states.push({ kind: 'char', code: template.charCodeAt(i) });
      continue;
    }
    const end = template.indexOf('}', i);
    if (end === -1) return undefined;
    const expression = expressionStates(template.slice(i + 1, end));
    if (expression === undefined) return undefined;
    states.push(...expression);
    i = end;
  }
  return (uri) => !traverses(uri) && accepts(states, uri);
}

/**
 * A percent-encoded `/`, `\` or `.`, or a `.` or `..` path segment. A variable that holds one
 * of them matches its expression as RFC 6570 writes it, yet a server that decodes the value
 * and joins it to a path (`..%2Fsecrets`) reads outside what the approved template names. No
 * well-formed value needs them, so a URI that holds one matches no template.
 */
function traverses(uri: string): boolean {
  return /%(?:2f|5c|2e)|(?:^|[/:])\.{1,2}(?:[/?#]|$)/i.test(uri);
}

/** Runs the automaton: the set of states reached after each character of `uri`. */
function accepts(states: readonly State[], uri: string): boolean {
  const final = states.length;
  // marks[s] === step: state s is already in the set of this step.
  const marks = new Int32Array(final + 1).fill(-1);
  let current: number[] = [];
  let step = 0;
  const add = (set: number[], s: number): void => {
    if (marks[s] === step) return;
    marks[s] = step;
    set.push(s);
    const state = states[s];
    if (state?.kind === 'loop') add(set, s + 1);
    else if (state?.kind === 'optional') add(set, s + 2);
  };
  add(current, 0);
  for (let i = 0; i < uri.length; i++) {
    const code = uri.charCodeAt(i);
    const next: number[] = [];
    step++;
    for (const s of current) {
      const state = states[s];
      if (state === undefined) continue;
      if (state.kind === 'loop') {
        if (code < 128 && state.allowed[code] === 1) add(next, s);
      } else if (state.code === code) add(next, s + 1);
    }
    if (next.length === 0) return false;
    current = next;
  }
  return current.includes(final);
}
