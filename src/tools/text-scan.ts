/**
 * The checks one piece of model-facing text gets (docs/judging.md, "Findings"): hidden
 * characters, instructions aimed at the model, hidden blocks and claims over other tools.
 * Offline and pure. Every check is a regular expression whose quantifiers are bounded, run once
 * per text, so a check costs time linear in the text (a 1 MB description included): no
 * quantifier nests an unbounded one, and the word gaps are `(?:\S{1,n} ){0,m}`.
 *
 * The phrase checks read a normalised copy (normalise below) so that the usual evasions, a
 * Cyrillic `о` for a Latin `o`, a zero-width space inside `ignore`, full-width letters, odd
 * spacing or case, do not hide a phrase; spans are mapped back to the text as written.
 */

import { FINDING_LEVELS, TEXT_FINDING_CODES } from '../tool-record.ts';

export { FINDING_LEVELS, TEXT_FINDING_CODES };
export type FindingLevel = (typeof FINDING_LEVELS)[number];

export type TextFindingCode = (typeof TEXT_FINDING_CODES)[number];

/** One thing a check found: where in the text (UTF-16 offsets, end exclusive) and why. */
export interface Hit {
  code: TextFindingCode;
  level: FindingLevel;
  start: number;
  end: number;
  reason: string;
}

interface Rule {
  code: TextFindingCode;
  level: FindingLevel;
  /**
   * Words one of which every match contains: a text without any is not run through the
   * pattern. Most descriptions have none, and `includes` is far cheaper than the pattern.
   */
  cues: readonly string[];
  pattern: RegExp;
  reason: string;
}

// --- hidden characters, on the text as written ----------------------------------------------

/** Unicode tags (U+E0000–E007F): invisible ASCII, how whole instructions are smuggled. */
const TAGS = /[\u{E0000}-\u{E007F}]+/gu;
/** A flag emoji (🏴 + tags + cancel tag) is the one legitimate use of tag characters. */
const FLAG_SEQUENCE = /^\u{1F3F4}[\u{E0061}-\u{E007A}]{2,6}\u{E007F}/u;
/** Embeddings, overrides and isolates reorder what is shown (CVE-2021-42574). */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/gu;
/**
 * Characters that show as nothing: zero-width spaces and joiners, word joiners and invisible
 * operators, the BOM inside text, the soft hyphen, Hangul fillers, the variation selectors of the
 * supplement (bytes hidden in "emoji steganography"). Joiners beside a letter of a script that
 * needs them, or inside an emoji sequence, are left alone.
 */
const INVISIBLE =
  // eslint-disable-next-line no-misleading-character-class -- single code points, each matched alone
  /[\u200b-\u200d\u2060-\u2064\ufeff\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0\u{E0100}-\u{E01EF}]+/gu;
const JOINER = /^[\u200c\u200d]$/u;
const NEEDS_JOINERS =
  // eslint-disable-next-line no-misleading-character-class -- single code points, each matched alone
  /[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\ufe0f\p{Script=Arabic}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Syriac}]/u;

/** Scripts whose letters pass for Latin ones. */
const LOOKALIKE_SCRIPT =
  /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]/u;
/** Greek letters used as symbols beside Latin ones (µs, πr², Δt, Ω). */
const SYMBOL_GREEK = /[μπΔΩλΣθ]/gu;
const WORD = /[\p{L}\p{M}][\p{L}\p{M}\p{N}_]{0,63}/gu;
const LATIN = /\p{Script=Latin}/u;

function hiddenCharacters(text: string, hits: Hit[]): void {
  for (const m of text.matchAll(TAGS)) {
    const before = text.lastIndexOf('\u{1F3F4}', m.index);
    if (
      before >= 0 &&
      before + 2 === m.index &&
      FLAG_SEQUENCE.test(text.slice(before, m.index + m[0].length))
    )
      continue;
    hits.push(
      at(
        'tag-characters',
        'critical',
        m,
        `${[...m[0]].length} invisible tag characters: ASCII text the user cannot see`,
      ),
    );
    break;
  }
  const bidi = BIDI.exec(text);
  BIDI.lastIndex = 0;
  if (bidi !== null) {
    hits.push(
      at(
        'bidi-control',
        'critical',
        bidi,
        'a bidi control reorders how the text around it is shown',
      ),
    );
  }
  let invisible = 0;
  let first: RegExpMatchArray | undefined;
  for (const m of text.matchAll(INVISIBLE)) {
    if (JOINER.test(m[0]) && beside(text, m.index, m[0].length, NEEDS_JOINERS)) continue;
    if (m.index === 0 && m[0] === '\ufeff') continue;
    invisible += [...m[0]].length;
    first ??= m;
  }
  if (first !== undefined) {
    // One stray zero-width space is a copy-and-paste accident; several hide a word or bytes.
    const level = invisible > 1 ? 'critical' : 'warning';
    hits.push(
      at(
        'invisible-characters',
        level,
        first,
        `${invisible} invisible ${invisible === 1 ? 'character' : 'characters'}`,
      ),
    );
  }
  if (!LOOKALIKE_SCRIPT.test(text)) return;
  for (const m of text.matchAll(WORD)) {
    const word = m[0].replace(SYMBOL_GREEK, '');
    if (LATIN.test(word) && LOOKALIKE_SCRIPT.test(word)) {
      hits.push(
        at(
          'mixed-script',
          'warning',
          m,
          'a word mixes Latin with look-alike letters of another script',
        ),
      );
      return;
    }
  }
}

function beside(text: string, index: number, length: number, pattern: RegExp): boolean {
  const before = String.fromCodePoint(text.codePointAt(Math.max(0, index - 2)) ?? 32);
  const prev = text.charAt(index - 1);
  const next = String.fromCodePoint(text.codePointAt(index + length) ?? 32);
  return pattern.test(prev) || pattern.test(before) || pattern.test(next);
}

function at(code: TextFindingCode, level: FindingLevel, m: RegExpMatchArray, reason: string): Hit {
  const start = m.index ?? 0;
  return { code, level, start, end: start + m[0].length, reason };
}

// --- normalisation for the phrase checks -----------------------------------------------------

/** Letters of other scripts that pass for Latin ones (Unicode confusables, the common part). */
const CONFUSABLE: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  һ: 'h',
  ɡ: 'g',
  ɩ: 'i',
  ı: 'i',
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ω: 'w',
};
// eslint-disable-next-line no-misleading-character-class -- single code points, each matched alone
const DROPPED = /[\p{Cf}\p{Mn}\u00ad\u115f\u1160\u3164\uffa0\u{E0100}-\u{E01EF}]/u;
const SPACE = /[\s\p{Zs}]/u;
const PLAIN = /^[\x20-\x7e]*$/;

/** A lower-case copy for the phrase checks and, per character of it, its offset in `text`. */
export interface Normalised {
  text: string;
  /** Undefined when the copy lines up with the text (plain ASCII with single spaces). */
  offsets: Int32Array | undefined;
}

/**
 * Lower case; hidden and combining characters dropped; look-alike letters and compatibility
 * forms (full-width, ligatures) as their Latin letters; every run of spaces, line breaks and
 * (unless `keepUnderscores`, for reading identifiers) underscores as one space. One pass, one
 * output character per kept input character or less.
 */
export function normalise(text: string, keepUnderscores = false): Normalised {
  if (
    PLAIN.test(text) &&
    !/\s\s|[\t\n\r\v\f]/.test(text) &&
    (keepUnderscores || !text.includes('_'))
  ) {
    return { text: text.toLowerCase(), offsets: undefined };
  }
  const out: string[] = [];
  const offsets = new Int32Array(text.length + 1);
  let n = 0;
  let spaced = false;
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i);
    let mapped: string;
    let width = 1;
    if (code < 0x80) {
      const isSpace =
        code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code === 0x5f && !keepUnderscores);
      mapped = isSpace
        ? ' '
        : code >= 0x41 && code <= 0x5a
          ? String.fromCharCode(code + 32)
          : text.charAt(i);
    } else {
      const char = String.fromCodePoint(text.codePointAt(i)!);
      width = char.length;
      if (SPACE.test(char)) mapped = ' ';
      else if (DROPPED.test(char)) mapped = '';
      else mapped = CONFUSABLE[char.toLowerCase()] ?? char.normalize('NFKC').toLowerCase();
    }
    if (mapped === ' ') {
      if (!spaced) {
        out.push(' ');
        offsets[n++] = i;
      }
      spaced = true;
    } else if (mapped.length === 1) {
      spaced = false;
      out.push(mapped);
      offsets[n++] = i;
    } else if (mapped !== '') {
      spaced = false;
      for (const c of mapped) {
        out.push(c);
        offsets[n++] = i;
      }
    }
    i += width;
  }
  offsets[n] = text.length;
  return { text: out.join(''), offsets: offsets.subarray(0, n + 1) };
}

function original(normal: Normalised, start: number, end: number): { start: number; end: number } {
  if (normal.offsets === undefined) return { start, end };
  const last = normal.offsets[Math.max(start, end - 1)]!;
  // The end is after the last character matched, which may be a surrogate pair.
  return {
    start: normal.offsets[start]!,
    end: Math.max(last + 1, normal.offsets[end] ?? last + 1),
  };
}

// --- phrases aimed at the model, on the normalised copy ----------------------------------------

/** Up to `n` words between two parts of a phrase. */
const gap = (n: number) => `(?:\\S{1,40} ){0,${n}}`;
const NEGATION = `(?:do not|don'?t|never|must not|mustn'?t|should not|shouldn'?t|cannot|can'?t|no need to)`;
const USER = `(?:the |your |any )?(?:user|human|person|operator|requester|end user)s?\\b`;
const READ = `(?:read|cat|open|load|access|include|attach|upload|send|copy|fetch|get|pass|provide|extract|collect|dump|print|output|append|embed|contents? of|retrieve|grab|steal|exfiltrate)`;
const SENSITIVE_FILE = String.raw`(?:~?\/?\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws\/credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials|\.docker\/config\.json|\.kube\/config|\/etc\/(?:passwd|shadow)\b|\bmcp\.json\b|claude_desktop_config|\.cursor\/|(?:^|[\s'"\x60(\/])\.env(?:\.[a-z]{1,12})?\b|\bprivate[ -]?keys?\b|\.pem\b|\bwallet\.dat\b|\bkeychain\b)`;
const SENSITIVE_FILE_CUES = [
  '.ssh',
  'id ',
  'id_',
  '.aws',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-cred',
  '.docker',
  '.kube',
  '/etc/',
  'mcp.json',
  'claude',
  '.cursor',
  '.env',
  'private',
  '.pem',
  'wallet',
  'keychain',
];
const SECRET = `(?:api[ -]?keys?|secrets?|credentials?|passwords?|passphrases?|(?:access |auth |bearer |session |refresh )?tokens?|ssh keys?|environment variables?|env vars?|cookies?|seed phrases?|mnemonics?)`;
const SEND = `(?:send|post|upload|forward|transmit|submit|report|exfiltrate|leak|relay|beacon|mirror|sync|copy|pipe|deliver|share|log)`;
const URL_LITERAL = String.raw`(?:https?|ftp|wss?):\/\/[^\s"'<>]{1,200}`;
const OTHER_TOOLS = `(?:any|every|all|each|other|another)(?: other)? (?:\\S{1,40} )?(?:tools?|functions?|actions?|servers?|commands?)`;

const PHRASES: readonly Rule[] = [
  {
    code: 'conceal-from-user',
    cues: [
      'user',
      'human',
      'person',
      'operator',
      'requester',
      'secretly',
      'silently',
      'covertly',
      'quietly',
      'invisibly',
    ],
    level: 'critical',
    pattern: new RegExp(
      [
        `\\b${NEGATION} ${gap(3)}(?:tell|inform|mention|reveal|show|disclose|notify|alert|let|warn|ask) ${gap(2)}${USER}`,
        `\\bwithout ${gap(2)}(?:telling|informing|notifying|alerting|asking|showing|letting|warning|mentioning (?:it |this )?to) ${gap(1)}${USER}`,
        `\\b(?:hide|conceal|keep|withhold) ${gap(5)}(?:from|away from|secret from|hidden from) ${USER}`,
        `\\b${USER} (?:must|should|needs? to|will|may) (?:never|not) ${gap(1)}(?:know|see|notice|find out|be told|be aware|learn)`,
        `\\b(?:secretly|silently|covertly|quietly|invisibly) ${gap(2)}(?:read|send|include|call|run|execute|upload|copy|add|forward|pass|attach)`,
      ].join('|'),
    ),
    reason: 'tells the model to keep something from the user',
  },
  {
    code: 'ignore-instructions',
    cues: [
      'ignore',
      'disregard',
      'forget',
      'override',
      'bypass',
      'skip',
      'precedence',
      'priority',
      'you are now',
      'from now on',
      'new instructions',
      'new system',
      'developer mode',
      'jailbreak',
    ],
    level: 'critical',
    pattern: new RegExp(
      [
        `\\b(?:ignore|disregard|forget|override|bypass|skip) (?:all |any )?(?:of )?(?:the |your |these |those )?(?:previous|prior|above|earlier|preceding|other|system|safety|original|existing|user'?s?|developer'?s?|security) ${gap(2)}(?:instructions|prompts?|rules|guidelines|directions|messages|context|policies|restrictions|guardrails|warnings|confirmations?)`,
        `\\bthis (?:instruction|rule|message|note|directive) (?:takes|has|gets) (?:precedence|priority)`,
        `\\b(?:you are now|from now on,? you|new (?:system )?instructions:|system override|developer mode|jailbreak)`,
      ].join('|'),
    ),
    reason: 'tells the model to set aside its other instructions',
  },
  {
    code: 'sensitive-file',
    cues: SENSITIVE_FILE_CUES,
    level: 'critical',
    pattern: new RegExp(`\\b${READ} ${gap(6)}\\S{0,40}${SENSITIVE_FILE}`),
    reason: 'asks for a key, credential or configuration file',
  },
  {
    code: 'sensitive-file',
    cues: SENSITIVE_FILE_CUES,
    level: 'info',
    pattern: new RegExp(SENSITIVE_FILE),
    reason: 'names a key, credential or configuration file',
  },
  {
    code: 'credential-request',
    cues: [
      'key',
      'secret',
      'credential',
      'password',
      'passphrase',
      'token',
      'environment',
      'env var',
      'cookie',
      'seed',
      'mnemonic',
    ],
    level: 'warning',
    pattern: new RegExp(
      `\\b(?:read|include|pass|extract|collect|copy|dump|print|append|attach|embed|send|upload|forward|retrieve|look up|find|gather|list all|grab) (?:all |any |every )?(?:the |your |their |of the |available )?(?:\\S{1,20} )?${SECRET}\\b(?! (?:field|parameter|argument|header)s?\\b)`,
    ),
    reason: 'asks the model for secrets (keys, tokens, passwords, environment variables)',
  },
  {
    code: 'send-to-url',
    cues: ['://', 'url', 'endpoint', 'webhook', 'server', 'address', 'domain', 'collector'],
    level: 'critical',
    pattern: new RegExp(`\\b${SEND} ${gap(8)}(?:to|at|via|into|using) ${gap(2)}${URL_LITERAL}`),
    reason: 'tells the model to send data to a URL',
  },
  {
    code: 'send-to-url',
    cues: ['://', 'url', 'endpoint', 'webhook', 'server', 'address', 'domain', 'collector'],
    level: 'warning',
    pattern: new RegExp(
      `\\b${SEND} ${gap(6)}(?:to|at) (?:this |the following |our |my |a remote |an external |the )?(?:url|endpoint|webhook|server|address|domain|collector|log server)\\b(?:(?: \\S{1,20}){0,2} (?:below|above|:))`,
    ),
    reason: 'tells the model to send data to an address',
  },
  {
    code: 'call-first',
    cues: ['before', 'first', 'every'],
    level: 'warning',
    pattern: new RegExp(
      [
        `\\bbefore (?:using|calling|invoking|running|executing|answering|responding|replying|doing) ${gap(1)}${OTHER_TOOLS}`,
        `\\bbefore (?:any|every|each) (?:other )?(?:tool|function|action|request|response|answer|reply|message|query)`,
        `\\b(?:always|must|first) ${gap(2)}(?:call|invoke|run|use|execute) (?:this|the) ${gap(2)}(?:tool|function) (?:first|before (?:any|every|all|each|other|doing|answering|responding))`,
        `\\b(?:on|for|after|with) every (?:request|message|query|turn|conversation|prompt|call|tool call)\\b,? ${gap(3)}(?:call|invoke|run|use|execute)`,
      ].join('|'),
    ),
    reason: 'tells the model to call tools before, or around, every other action',
  },
  {
    code: 'hidden-tag',
    cues: ['<', '[', '{{'],
    level: 'warning',
    pattern:
      /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin|sudo|override|assistant|context|critical|priority|user_?query|tool_?call|function_?call|note_to_(?:ai|model|assistant)|ai|model|llm|agent|directive)\b[^<>]{0,200}>|<!--|\[(?:system|important|instructions?|admin|inst|hidden)\]|\{\{ ?(?:system|instructions?) ?\}\}/,
    reason: 'a block marked for the model, hidden from a reader of the rendered text',
  },
  {
    code: 'hidden-tag',
    cues: ['<', '[', '{{'],
    level: 'info',
    pattern: /<[a-z][a-z0-9_-]{0,30}(?: [^<>]{0,200})?>/,
    reason: 'an HTML- or XML-like tag',
  },
  {
    code: 'shadowing-claim',
    cues: ['tool', 'function', 'action', 'server', 'command'],
    level: 'warning',
    pattern: new RegExp(
      [
        `\\b(?:when|whenever|if|before|after) ${gap(3)}(?:using|calling|invoking|running) ${gap(2)}(?:any |every |all |the )?(?:other|another|${OTHER_TOOLS})`,
        `\\b(?:instead of|rather than|replaces?|overrides?|supersedes?|takes precedence over|shadows?) ${gap(2)}${OTHER_TOOLS}`,
        `\\b${OTHER_TOOLS} ${gap(3)}(?:must|should|shall|need to|have to|are required to|will now)\\b`,
        `\\b(?:changes?|modif(?:y|ies)|alters?|affects?) (?:how|the behaviou?r of|the way) ${gap(2)}${OTHER_TOOLS}`,
        `\\b(?:the |a )?\\S{1,64} tool (?:of|from|on) (?:the |another |other )(?:\\S{1,40} )?server\\b`,
      ].join('|'),
    ),
    reason: 'claims to change how other tools behave',
  },
];

// --- blobs, on the text as written ----------------------------------------------------------

/** The shortest blob either pattern matches. */
const BLOB_MIN = 80;
const BASE64 = /[A-Za-z0-9+/]{80,}={0,2}|[A-Za-z0-9_-]{120,}/g;
const HEX = /(?:[0-9a-fA-F]{2}(?:\\x|%| )?){64,}/g;

function blobs(text: string, hits: Hit[]): void {
  for (const m of text.matchAll(BASE64)) {
    // A long word is not a blob: base64 mixes cases and digits.
    if (/[a-z]/.test(m[0]) && /[A-Z]/.test(m[0]) && /[0-9]/.test(m[0])) {
      hits.push(at('encoded-blob', 'warning', m, `a ${m[0].length}-character base64 blob`));
      return;
    }
  }
  for (const m of text.matchAll(HEX)) {
    // Hex bytes use digits and letters both; a run of one letter is a word.
    if (/[0-9]/.test(m[0]) && /[a-f]/i.test(m[0])) {
      hits.push(at('encoded-blob', 'warning', m, `a ${m[0].length}-character hex blob`));
      return;
    }
  }
}

/** The checks of a name (a property or argument name): only hidden characters matter there. */
export function scanName(name: string): Hit[] {
  const hits: Hit[] = [];
  if (!PLAIN.test(name)) hiddenCharacters(name, hits);
  return hits;
}

const CUES = new Map<Rule, RegExp>();

/** One pattern for a rule's cues: one pass over the text rather than one per cue. */
function cueOf(rule: Rule): RegExp {
  let cue = CUES.get(rule);
  if (cue === undefined) {
    cue = new RegExp(
      rule.cues.map((word) => word.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'),
    );
    CUES.set(rule, cue);
  }
  return cue;
}

/** Every check of one text: at most one hit per code, the first. */
export function scanText(text: string): Hit[] {
  const hits: Hit[] = [];
  if (text.length === 0) return hits;
  // Hidden characters are none of printable ASCII, and a blob is long.
  if (!PLAIN.test(text)) hiddenCharacters(text, hits);
  if (text.length >= BLOB_MIN) blobs(text, hits);
  const normal = normalise(text);
  const found = new Set<TextFindingCode>();
  for (const rule of PHRASES) {
    if (found.has(rule.code) || !cueOf(rule).test(normal.text)) continue;
    const m = rule.pattern.exec(normal.text);
    if (m === null) continue;
    found.add(rule.code);
    hits.push({
      code: rule.code,
      level: rule.level,
      ...original(normal, m.index, m.index + m[0].length),
      reason: rule.reason,
    });
  }
  return hits;
}
