/**
 * The console's JSON API as the page reads it: what the server (src/console) sends and the
 * frontend (this directory) renders. Types only, so that both sides compile against one shape
 * without the page importing any server code.
 *
 * Every string that came from an MCP server (names, descriptions, schemas, serverInfo, error
 * text) is sent as it is and rendered as text by the page (dom.ts), never as markup.
 */

/** As status.drift says it (DRIFT_SEVERITIES), most severe first. */
export type Severity = 'breaking' | 'widening' | 'compatible' | 'description-only';

export interface Session {
  /** Who the API server says the console acts as (SelfSubjectReview), when it says. */
  user: string | undefined;
  context: string;
  /** Namespaces listed; empty: every namespace. */
  namespaces: string[];
  /** Sent back in the X-Console-CSRF header of every write. */
  csrf: string;
  /** What the console cannot show under the user's RBAC (Events, snapshots), said plainly. */
  limits: string[];
}

export interface FleetRow {
  key: string;
  namespace: string;
  name: string;
  resourceVersion: string;
  ready: { status: string; reason: string } | undefined;
  /** `stdio`, `streamable-http`, or `url` for a server that runs elsewhere. */
  transport: string;
  tools: number | undefined;
  prompts: number | undefined;
  resources: number | undefined;
  drift: {
    status: string;
    reason: string;
    severity: Severity | undefined;
    since: string | undefined;
    added: number;
    removed: number;
    changed: number;
  };
  findings: number;
  codeChanged: { since: string; message: string } | undefined;
  lastDiscovery: string | undefined;
}

export interface Fleet {
  rows: FleetRow[];
}

/** One part of a compared text: kept, removed from the approved text, or added in the current. */
export interface TextPart {
  op: '=' | '-' | '+';
  text: string;
}

export interface FieldComparison {
  field: string;
  changed: boolean;
  /** `text`: compared word by word; `json`: pretty-printed and compared line by line. */
  form: 'text' | 'json';
  /** Undefined: the field is absent on that side. */
  approved: string | undefined;
  current: string | undefined;
  /** The comparison, when both sides are known and it was not too costly to compute. */
  parts: TextPart[] | undefined;
  /** Why `parts` is missing although the field changed. */
  note: string | undefined;
}

export interface SchemaChangeView {
  field: string;
  path: string;
  effect: string;
  detail: string;
  severity: Severity;
}

export type ItemKind = 'tool' | 'prompt' | 'resource' | 'resourceTemplate';

export interface ReviewItem {
  kind: ItemKind;
  key: string;
  /** `unapproved`: listed, and there is no baseline at all. */
  state: 'changed' | 'added' | 'removed' | 'unchanged' | 'unapproved';
  severity: Severity | undefined;
  /** What the baseline allows to be said: full definitions, field digests, or a digest. */
  basis: 'definition' | 'field-digests' | 'digest' | undefined;
  fields: FieldComparison[];
  schemaChanges: SchemaChangeView[];
  details: string[];
  findings: string[];
  currentDigest: string | undefined;
}

export interface TimelineEntry {
  time: string | undefined;
  source: 'condition' | 'event';
  /** Condition: its type; Event: Normal or Warning. */
  kind: string;
  status: string | undefined;
  reason: string;
  message: string;
  count: number | undefined;
}

/** What a server says it is; status keeps whichever parts it sent. */
export interface ServerInfo {
  name?: string | undefined;
  version?: string | undefined;
}

export interface Provenance {
  image: string | undefined;
  imageDigests: string[];
  packages: { launcher: string; name: string; version: string }[];
  serverInfo: ServerInfo | undefined;
  codeChanged: { since: string; message: string } | undefined;
  /** What ran when the baseline was approved. */
  approved:
    | {
        imageDigests: string[];
        packages: { launcher: string; name: string; version: string }[];
        serverInfo: ServerInfo | undefined;
      }
    | undefined;
  /** Annotations that say where the server came from (a registry entry), as set. */
  annotations: { key: string; value: string }[];
}

export interface ServerReview {
  row: FleetRow;
  generation: number | undefined;
  endpoint: string | undefined;
  url: string | undefined;
  snapshot:
    | {
        digest: string;
        protocolVersion: string;
        serverInfo: ServerInfo | undefined;
        instructions: string | undefined;
      }
    | undefined;
  /** Why the snapshot cannot be shown (not discovered yet, too large, being replaced). */
  snapshotProblem: string | undefined;
  baseline: 'none' | 'tools' | 'invalid';
  baselineProblem: string | undefined;
  items: ReviewItem[];
  findings: { item: string; problem: string }[];
  provenance: Provenance;
  timeline: TimelineEntry[];
  /** Whether this user may approve (patch MCPServers here), and if not, why. */
  access: { canApprove: boolean; reason: string | undefined };
  /** Who approved what and when, newest first (spec.tools.approved.history). */
  history: ApprovalRecord[];
}

/** What the live stream (`/api/stream`, server-sent events) carries. */
export type StreamMessage =
  | { type: 'upsert'; row: FleetRow }
  | { type: 'delete'; key: string }
  /** Something a server page shows changed (its Events, its snapshot). */
  | { type: 'touch'; key: string };

export interface ApiError {
  code: string;
  message: string;
}

/** One entry an approval adds, changes or removes (src/approval's PlannedEntry). */
export interface PlannedEntry {
  kind: ItemKind;
  name: string;
  change: 'added' | 'changed' | 'removed' | 'renamed';
  severity: Severity;
  fields: string[];
  details: string[];
  texts: { field: string; before: string | undefined; after: string | undefined }[];
  digest?: string | undefined;
  findings: string[];
  /** A renamed entry: the approved name it replaces, and how alike the two are (percent). */
  from?: string | undefined;
  similarity?: number | undefined;
}

/** One past approval, as spec.tools.approved.history records it. */
export interface ApprovalRecord {
  approvedBy: string;
  approvedAt: string;
  snapshotDigest: string;
  note?: string | undefined;
  changes?: { kind: ItemKind; name: string; change: string; digest?: string | undefined }[];
  omitted?: number | undefined;
}

/** What approving would write, for the approve page to show before anything is written. */
export interface ApprovalPreview {
  namespace: string;
  name: string;
  /** The write is conditioned on it: a server changed since is not approved. */
  resourceVersion: string;
  snapshotDigest: string;
  approvedBy: string;
  entries: PlannedEntry[];
  /** Tools that may be chosen one by one (prompts and resources go with "all"). */
  choosable: string[];
  /** It replaces or removes something approved before: the page asks to confirm. */
  needsConfirmation: boolean;
  leftOut: string[];
  /** `spec.tools.approved` exactly as the approval writes it. */
  approved: Record<string, unknown>;
  changesSpec: boolean;
  history: ApprovalRecord[];
}

/** What to approve: every entry, or only some tools; and why. */
export interface PreviewRequest {
  /** Only these tools; every entry when absent. */
  tools?: string[] | undefined;
  note?: string | undefined;
}

export interface ApprovalRequest extends PreviewRequest {
  /** The preview's: the approval is refused if the server changed since. */
  resourceVersion: string;
  /** Needed when the preview said `needsConfirmation`. */
  confirmed: boolean;
}

export interface ApprovalResult {
  resourceVersion: string;
  record: ApprovalRecord;
}
