/**
 * The forms and bounds of what the operator records of a server's tools, prompts and
 * resources: the names it accepts, the fields it digests, how a digest is written, and how much
 * server-chosen text status keeps. A shared leaf: the API (src/api) declares them in the CRD,
 * and the pure tool logic (src/tools), which the bridge runs too, makes records that fit them
 * without loading the API's schemas.
 */

/** Tool names, MCP 2025-11-25 server/tools "Tool Names": 1-128 of A-Z a-z 0-9 _ - . */
export const TOOL_NAME_MAX = 128;
/** The same rule as one pattern, for names the operator writes (status) and checks (discovery). */
export const TOOL_NAME_PATTERN = `^[A-Za-z0-9_.-]{1,${TOOL_NAME_MAX}}$`;

/**
 * The parts of an MCP `Tool` that are digested and compared one by one (MCP 2025-11-25,
 * server/tools, "Tool"). The one list: src/tools/digest.ts digests exactly these
 * (DIGEST_FIELDS), and says why these and no others; status.drift names fields from it.
 */
export const TOOL_FIELDS = [
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
  'execution',
] as const;
export type ToolField = (typeof TOOL_FIELDS)[number];

/** `sha256:` and 64 lowercase hex digits: the digest form of src/tools/digest.ts. */
export const DIGEST_PATTERN = '^sha256:[0-9a-f]{64}$';

/**
 * A field digest: full, or abbreviated to its first 12 hex digits. A field digest only says
 * which field moved; the whole digest is what proves a change (docs/adr/0003), so an
 * abbreviation can at worst misname a field, never hide a change.
 */
export const FIELD_DIGEST_PATTERN = '^sha256:[0-9a-f]{12}([0-9a-f]{52})?$';

/**
 * How much a change to an approved entry matters, most severe first (docs/judging.md has an
 * example of each): breaking (callers built for the approved schema may fail), widening (the
 * entry may now do or accept more: a hint lost or gained, a constraint dropped, a new
 * free-text argument), compatible (old calls stay valid and nothing widened), description-only
 * (only the text the model reads).
 */
export const DRIFT_SEVERITIES = ['breaking', 'widening', 'compatible', 'description-only'] as const;

/**
 * Everything in status that a server chose (names, versions, capability keys, error text) is
 * bounded in the CRD as well as in the operator, which makes control characters visible and
 * cuts long text (src/tools/text.ts): a status write the API server refuses would take Ready
 * and every other condition down with it. Tool names are only ever ones that follow MCP's
 * rules; a name that breaks them is reported in status.drift.invalidNames instead.
 */
export const SERVER_TEXT_MAX = TOOL_NAME_MAX;
/** MCP defines six server capabilities; room for experimental ones, not for a flood. */
export const CAPABILITIES_MAX = 32;

/** Characters of a prompt name or resource URI (template) status keeps. */
export const CATALOG_KEY_MAX = 256;
/** Entries of each status.drift list of prompts and resources; `mcp-operator diff` has them all. */
export const CATALOG_DRIFT_MAX = 100;

/** Findings status.discovery keeps; the snapshot ConfigMap has them all. */
export const FINDINGS_MAX = 20;
/** Characters of a finding's problem that status keeps. */
export const FINDING_PROBLEM_MAX = 200;

/**
 * Levels of a finding on model-facing text, most severe first (docs/judging.md, "Findings"):
 * critical and warning raise the alarm at the default level, info is shown only.
 */
export const FINDING_LEVELS = ['critical', 'warning', 'info'] as const;
/**
 * The level at and above which a finding raises the alarm unless spec.tools.textFindings says
 * otherwise: no benign release of the corpus (test/tools/findings-corpus) reaches it.
 */
export const DEFAULT_FINDING_ALARM_LEVEL = 'warning' satisfies (typeof FINDING_LEVELS)[number];

/** The codes of findings on model-facing text; docs/judging.md has an example of each. */
export const TEXT_FINDING_CODES = [
  'tag-characters',
  'bidi-control',
  'invisible-characters',
  'mixed-script',
  'conceal-from-user',
  'ignore-instructions',
  'sensitive-file',
  'credential-request',
  'send-to-url',
  'call-first',
  'hidden-tag',
  'encoded-blob',
  'long-text',
  'shadowing-claim',
  'shadowing-name',
] as const;

/** Findings on model-facing text that status.discovery keeps, most severe first. */
export const TEXT_FINDINGS_MAX = 20;
/** Characters of a finding's place (item, field) and reason that status keeps. */
export const TEXT_FINDING_PLACE_MAX = 256;
