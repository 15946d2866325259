/**
 * spec.tools of MCPServer v1alpha1: the allowlist, the approved baseline and the drift policy.
 */

import { Type, type Static } from '@sinclair/typebox';
import { LocalObjectReference } from '../core-v1.ts';
import { FreeForm, StringEnum } from '../schema.ts';
import { DEFAULTS } from './defaults.ts';
import {
  PACKAGE_LAUNCHERS,
  PACKAGE_NAME_MAX,
  PACKAGE_NAME_PATTERN,
  PACKAGE_VERSION_MAX,
  PACKAGE_VERSION_PATTERN,
  PACKAGES_MAX,
} from '../../resolved-package.ts';
import {
  DIGEST_PATTERN,
  FIELD_DIGEST_PATTERN,
  FINDING_LEVELS,
  TOOL_NAME_MAX,
} from '../../tool-record.ts';

export const DRIFT_POLICIES = ['Warn', 'Enforce'] as const;

/** The characters of TOOL_NAME_PATTERN, for a CEL rule whose message can name them. */
const TOOL_NAME_CHARS = '^[A-Za-z0-9_.-]*$';
/** Most tools a baseline approves, an allowlist lists or discovery records. */
export const MAX_TOOLS = 1000;
/** ConfigMap and Secret keys: at most 253 characters (core/v1 validation). */
export const CONFIG_KEY_MAX = 253;

export function ToolName(description: string) {
  return Type.String({
    description,
    minLength: 1,
    maxLength: TOOL_NAME_MAX,
    'x-kubernetes-validations': [
      {
        rule: `self.matches('${TOOL_NAME_CHARS}')`,
        message:
          "tool names may only contain A-Z, a-z, 0-9, '_', '-' and '.' (MCP specification, Tool Names)",
      },
    ],
  });
}

const fieldDigest = (field: string) =>
  Type.Optional(
    Type.String({
      description: `Digest of the tool's ${field}; absent when the tool has none.`,
      maxLength: 71,
      'x-kubernetes-validations': [
        {
          rule: `self.matches('${FIELD_DIGEST_PATTERN}')`,
          message: 'a field digest is sha256: followed by 12 or 64 lowercase hex digits',
        },
      ],
    }),
  );

/** Per-field digests, as the snapshot ConfigMap and `mcp-operator approve --digests` write them. */
export function FieldDigests(description: string) {
  return Type.Object(
    {
      title: fieldDigest('title'),
      description: fieldDigest('description'),
      inputSchema: fieldDigest('inputSchema'),
      outputSchema: fieldDigest('outputSchema'),
      annotations: fieldDigest('annotations'),
      execution: fieldDigest('execution'),
    },
    { description },
  );
}

const APPROVED_FIELDS_DESCRIPTION =
  'Digests of the approved fields (sha256: and 12 or 64 hex digits), as `mcp-operator approve --digests` writes them: with them, drift names the fields that changed. Only with digest.';

const ApprovedTool = Type.Object(
  {
    name: ToolName('Name of the approved tool.'),
    digest: Type.Optional(
      Type.String({
        description:
          'SHA-256 of the whole tool definition (RFC 8785 canonical JSON), as `mcp-operator approve` prints it: sha256:<64 hex digits>.',
        maxLength: 71,
        'x-kubernetes-validations': [
          {
            rule: `self.matches('${DIGEST_PATTERN}')`,
            message: 'digest must be sha256: followed by 64 lowercase hex digits',
          },
        ],
      }),
    ),
    fields: Type.Optional(FieldDigests(APPROVED_FIELDS_DESCRIPTION)),
    definition: Type.Optional(
      Type.Object(
        {
          title: Type.Optional(Type.String({ description: 'Human-readable title of the tool.' })),
          description: Type.Optional(
            Type.String({ description: 'Description of the tool, as the model reads it.' }),
          ),
          inputSchema: FreeForm({ description: 'JSON Schema of the tool arguments.' }),
          outputSchema: Type.Optional(
            FreeForm({ description: 'JSON Schema of the structured result.' }),
          ),
          annotations: Type.Optional(
            FreeForm({ description: 'Tool annotations (hints such as readOnlyHint).' }),
          ),
          execution: Type.Optional(
            FreeForm({ description: 'Execution properties (such as task support).' }),
          ),
        },
        {
          description:
            'The approved tool definition as the server lists it in tools/list; reviewable in a pull request, unlike a digest.',
          'x-kubernetes-preserve-unknown-fields': true,
        },
      ),
    ),
  },
  {
    description: 'One approved tool: its name and either its digest or its full definition.',
    'x-kubernetes-validations': [
      {
        rule: 'has(self.digest) != has(self.definition)',
        message: 'an approved tool sets exactly one of digest or definition',
      },
      {
        rule: '!has(self.fields) || has(self.digest)',
        message: 'fields goes with digest: a definition has its field digests computed from it',
        fieldPath: '.fields',
        reason: 'FieldValueForbidden',
      },
    ],
  },
);

/** Most prompts, resources or resource templates a baseline approves. */
export const MAX_CATALOG_ITEMS = MAX_TOOLS;
/** Longest prompt name or resource URI (template) a baseline holds. */
export const CATALOG_KEY_LENGTH_MAX = 2048;

/**
 * One approved prompt, resource or resource template, keyed by `key` (name, uri or
 * uriTemplate): its digest, or its definition without the key as `mcp-operator approve` writes it.
 */
const ApprovedItem = (key: 'name' | 'uri' | 'uriTemplate', what: string) =>
  Type.Object(
    {
      [key]: Type.String({
        description: `The ${key} of the approved ${what}.`,
        minLength: 1,
        maxLength: CATALOG_KEY_LENGTH_MAX,
      }),
      digest: Type.Optional(
        Type.String({
          description: `SHA-256 of the whole ${what} (RFC 8785 canonical JSON of its ${key} and compared fields).`,
          maxLength: 71,
          'x-kubernetes-validations': [
            {
              rule: `self.matches('${DIGEST_PATTERN}')`,
              message: 'digest must be sha256: followed by 64 lowercase hex digits',
            },
          ],
        }),
      ),
      definition: Type.Optional(
        Type.Object(
          {},
          {
            description: `The approved ${what} as the server lists it, without its ${key}; reviewable in a pull request.`,
            'x-kubernetes-preserve-unknown-fields': true,
          },
        ),
      ),
    },
    {
      description: `One approved ${what}: its ${key} and either its digest or its full definition.`,
      'x-kubernetes-validations': [
        {
          rule: 'has(self.digest) != has(self.definition)',
          message: `an approved ${what} sets exactly one of digest or definition`,
        },
      ],
    },
  );

const ApprovedItems = (
  key: 'name' | 'uri' | 'uriTemplate',
  what: string,
  plural: string,
  enforced: string,
) =>
  Type.Optional(
    Type.Array(ApprovedItem(key, what), {
      description: `The approved ${plural}, inline. Set, they are compared with what the server lists and drift reports each kind as for tools, and under driftPolicy Enforce the bridge ${enforced}; unset, ${plural} are neither compared nor screened.`,
      maxItems: MAX_CATALOG_ITEMS,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': [key],
    }),
  );

/** A container image digest as the kubelet reports it in imageID, without the repository. */
export const IMAGE_DIGEST_PATTERN = '^sha256:[0-9a-f]{64}$';
/** Most distinct image digests recorded: one per image a rollout runs side by side. */
export const IMAGE_DIGESTS_MAX = 8;
/** serverInfo as a server reports it, shown and bounded (status and the approved provenance). */
export const serverInfoSchema = (description: string) =>
  Type.Object(
    {
      name: Type.Optional(
        Type.String({ description: 'Server name it reports.', maxLength: TOOL_NAME_MAX }),
      ),
      version: Type.Optional(
        Type.String({ description: 'Server version it reports.', maxLength: TOOL_NAME_MAX }),
      ),
    },
    { description },
  );

/** Packages a launcher resolved at start, as the supervisor read them (status and approval). */
export const resolvedPackagesSchema = (description: string) =>
  Type.Array(
    Type.Object(
      {
        launcher: StringEnum(PACKAGE_LAUNCHERS, {
          description:
            'What resolved the package when the server started: npx (from an npm registry) or uvx (from a Python package index; the name in its normalized form).',
        }),
        name: Type.String({
          description: 'Package name.',
          pattern: PACKAGE_NAME_PATTERN,
          maxLength: PACKAGE_NAME_MAX,
        }),
        version: Type.String({
          description: 'Version installed and run.',
          pattern: PACKAGE_VERSION_PATTERN,
          maxLength: PACKAGE_VERSION_MAX,
        }),
      },
      { description: 'One package at one version, as its launcher installed it.' },
    ),
    { description, maxItems: PACKAGES_MAX },
  );

const ApprovedProvenance = Type.Object(
  {
    imageDigests: Type.Optional(
      Type.Array(Type.String({ pattern: IMAGE_DIGEST_PATTERN }), {
        description: "Digests of the server's image then (status.provenance.imageDigests).",
        maxItems: IMAGE_DIGESTS_MAX,
      }),
    ),
    serverInfo: Type.Optional(
      serverInfoSchema('What the server said it was then (status.discovery.serverInfo).'),
    ),
    packages: Type.Optional(
      resolvedPackagesSchema(
        'Packages its npx or uvx command ran then (status.provenance.packages).',
      ),
    ),
  },
  {
    description:
      'What ran when these tools were approved, recorded by `mcp-operator approve`: for review (which code was looked at); drift compares the tools themselves.',
  },
);

/** Most approval records spec.tools.approved.history keeps, newest first. */
export const APPROVAL_HISTORY_MAX = 10;
/** Most entries one record lists, and all records together: the rest are counted in `omitted`. */
export const APPROVAL_CHANGES_MAX = MAX_TOOLS;
export const APPROVAL_NOTE_MAX = 1024;
/** Longest user name recorded: Kubernetes sets no bound, OIDC subjects are short. */
export const APPROVER_MAX = 512;
export const APPROVAL_ENTRY_KINDS = ['tool', 'prompt', 'resource', 'resourceTemplate'] as const;
export const APPROVAL_CHANGES = ['added', 'changed', 'removed', 'renamed'] as const;

const ApprovalChange = Type.Object(
  {
    kind: StringEnum(APPROVAL_ENTRY_KINDS, { description: 'What the entry is.' }),
    name: Type.String({
      description:
        'Its key: the name of a tool or prompt, the URI of a resource, the URI template of a resource template.',
      maxLength: CATALOG_KEY_LENGTH_MAX,
    }),
    change: StringEnum(APPROVAL_CHANGES, {
      description:
        'added: approved for the first time; changed: a new definition approved in place of the old; removed: no longer listed, taken out of the baseline; renamed: approved under this name in place of the tool `from`, which the server no longer lists (drift paired them as a rename).',
    }),
    from: Type.Optional(
      Type.String({
        description:
          'For renamed: the approved name it replaced, taken out of the baseline by this approval.',
        maxLength: CATALOG_KEY_LENGTH_MAX,
      }),
    ),
    similarity: Type.Optional(
      Type.Integer({
        description:
          'For renamed: how alike drift found the old and the new tool, in percent (status.drift.renamed).',
        minimum: 0,
        maximum: 100,
      }),
    ),
    digest: Type.Optional(
      Type.String({
        description: 'The digest approved (added and changed entries).',
        pattern: DIGEST_PATTERN,
        maxLength: 71,
      }),
    ),
  },
  { description: 'One entry an approval added, changed or removed.' },
);

const ApprovalRecord = Type.Object(
  {
    approvedBy: Type.String({
      description:
        'Who approved: the user name the API server authenticated (a SelfSubjectReview) when `mcp-operator approve` wrote the approval. A claim of the client; the API server audit log holds the proof.',
      minLength: 1,
      maxLength: APPROVER_MAX,
    }),
    approvedAt: Type.String({ description: 'When, in RFC 3339.', format: 'date-time' }),
    snapshotDigest: Type.String({
      description: 'The snapshot approved from (status.discovery.snapshotDigest then).',
      pattern: DIGEST_PATTERN,
      maxLength: 71,
    }),
    note: Type.Optional(
      Type.String({
        description: 'Why, in the approver’s words (`approve --note`).',
        maxLength: APPROVAL_NOTE_MAX,
      }),
    ),
    changes: Type.Optional(
      Type.Array(ApprovalChange, {
        description: 'What this approval added, changed or removed, with the digests it approved.',
        maxItems: APPROVAL_CHANGES_MAX,
      }),
    ),
    omitted: Type.Optional(
      Type.Integer({
        description: 'Changes of this approval not listed, past the bound of changes.',
        minimum: 1,
      }),
    ),
  },
  { description: 'One approval: who, when, from which snapshot, what it changed, and why.' },
);

const Approved = Type.Object(
  {
    provenance: Type.Optional(ApprovedProvenance),
    history: Type.Optional(
      Type.Array(ApprovalRecord, {
        description: `The approvals that made this baseline, newest first, as \`mcp-operator approve\` records them (at most ${APPROVAL_HISTORY_MAX}, and ${APPROVAL_CHANGES_MAX} changes in all; older ones are dropped: the API server audit log and Git keep the rest). For review only: drift compares the tools themselves.`,
        maxItems: APPROVAL_HISTORY_MAX,
      }),
    ),
    prompts: ApprovedItems(
      'name',
      'prompt',
      'prompts',
      'hides unapproved or drifted prompts from prompts/list and refuses prompts/get for them',
    ),
    resources: ApprovedItems(
      'uri',
      'resource',
      'resources',
      'hides unapproved or drifted resources from resources/list and refuses resources/read of them',
    ),
    resourceTemplates: ApprovedItems(
      'uriTemplate',
      'resource template',
      'resource templates',
      'hides unapproved or drifted templates from resources/templates/list and refuses resources/read of a URI that is not a listed resource and that no approved, undrifted template matches (RFC 6570)',
    ),
    tools: Type.Optional(
      Type.Array(ApprovedTool, {
        description: 'The approved tools, inline.',
        maxItems: MAX_TOOLS,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    ),
    configMapRef: Type.Optional(
      Type.Object(
        {
          name: LocalObjectReference.properties.name,
          key: Type.Optional(
            Type.String({
              description: `Key holding the tools list (YAML or JSON, the shape of approved.tools). Defaults to ${DEFAULTS.approvedKey}.`,
              default: DEFAULTS.approvedKey,
              minLength: 1,
              maxLength: CONFIG_KEY_MAX,
            }),
          ),
        },
        {
          description: 'A ConfigMap holding the approved tools, for sets too large to inline.',
        },
      ),
    ),
  },
  {
    description:
      'The approved baseline that discovery compares against: inline tools or a ConfigMap, not both.',
    'x-kubernetes-validations': [
      {
        rule: 'has(self.tools) != has(self.configMapRef)',
        message: 'spec.tools.approved sets exactly one of tools or configMapRef',
      },
    ],
  },
);

/**
 * spec.tools.textFindings: what findings on model-facing text do, each as a level of
 * FINDING_LEVELS ("at or above this level"). One object, one enum for every such setting.
 */
const TextFindingsSpec = Type.Object(
  {
    alarmLevel: Type.Optional(
      StringEnum(FINDING_LEVELS, {
        description:
          'The lowest level of a finding that raises the alarm: the TextFindings Warning Event, and alarm="true" on the gauge mcp_operator_server_text_findings that the MCPServerTextFindings alert fires on. critical, warning or info; findings below it are still recorded in status.discovery.textFindings and shown by `mcp-operator diff` (docs/judging.md).',
        default: DEFAULTS.textFindingAlarmLevel,
      }),
    ),
  },
  {
    description:
      'What findings on the text the model reads (descriptions, titles, names, instructions) set off (docs/judging.md, "Findings").',
  },
);

export const Tools = Type.Object(
  {
    allow: Type.Optional(
      Type.Array(ToolName('A tool name.'), {
        description:
          'Allowlist of tool names agents may see. Tools not listed are hidden under driftPolicy Enforce; listed tools the server no longer has are reported in status.drift.missingAllowed. Empty or unset allows every approved tool.',
        maxItems: MAX_TOOLS,
        'x-kubernetes-list-type': 'set',
      }),
    ),
    approved: Type.Optional(Approved),
    textFindings: Type.Optional(TextFindingsSpec),
    driftPolicy: Type.Optional(
      StringEnum(DRIFT_POLICIES, {
        description:
          'Warn: report drift in status and events only. Enforce: the bridge also hides and refuses tools that are unapproved, drifted or not allowed, and the prompts, resources and resource templates of each kind spec.tools.approved lists that are unapproved or drifted (every deployed server whose bridge is not opted out with spec.bridge.enabled false).',
        default: DEFAULTS.driftPolicy,
      }),
    ),
  },
  {
    description: 'Which tools are expected and what to do when the server exposes others.',
    default: {},
    'x-kubernetes-validations': [
      {
        rule: "!has(self.driftPolicy) || self.driftPolicy != 'Enforce' || has(self.approved)",
        message:
          'spec.tools.driftPolicy Enforce needs spec.tools.approved: without a baseline every tool would be refused',
        fieldPath: '.approved',
        reason: 'FieldValueRequired',
      },
    ],
  },
);

export type DriftPolicy = (typeof DRIFT_POLICIES)[number];
export type ApprovedTool = Static<typeof ApprovedTool>;
export type ApprovedProvenance = Static<typeof ApprovedProvenance>;
export type ApprovalRecord = Static<typeof ApprovalRecord>;
export type ApprovalChange = Static<typeof ApprovalChange>;
