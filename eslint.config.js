// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/ and what each may import, lowest first; see CONTRIBUTING.md, "Where the code
 * lives". An import against the direction fails the lint. Shared leaves (errors.ts,
 * duration.ts, flags.ts, command.ts, resolved-package.ts, tool-record.ts) import no layer.
 */
export const LAYERS = {
  api: { may: [] },
  kube: { may: [] },
  mcp: { may: [] },
  tools: { may: ['api', 'mcp'], typesOf: ['api'], pure: true },
  discovery: { may: ['api', 'kube', 'mcp', 'tools'] },
  bridge: { may: ['mcp', 'tools'] },
  controller: { may: ['api', 'kube', 'mcp', 'tools', 'discovery', 'bridge'] },
  approval: { may: ['api', 'kube', 'mcp', 'tools', 'discovery'] },
  registry: { may: ['api', 'mcp', 'tools'] },
  console: { may: ['api', 'kube', 'mcp', 'tools', 'discovery', 'approval'] },
  commands: {
    may: [
      'api',
      'kube',
      'mcp',
      'tools',
      'discovery',
      'bridge',
      'controller',
      'approval',
      'registry',
      'console',
    ],
  },
};

/** src/ runs without test/ (an installed package has none); `dev` reaches it by spawning. */
const NO_TEST_IMPORT = {
  regex: '(^|/)test/',
  message: 'src/ imports nothing from test/: see src/commands/test-harness.ts.',
};

/**
 * The rooms of src/bridge, lowest first, each with one job: the child process (spawn,
 * supervisor, pool), proxy mode (an HTTP upstream), policy (Enforce), auth (bearer and OAuth),
 * audit, and the HTTP front (endpoint, sessions, both eras, replicas, change feed, SSE). A room
 * imports only the rooms below it and the files beside upstream.ts in src/bridge, which import
 * no room; server.ts, command.ts and install.ts, on top, wire them.
 */
export const BRIDGE_ROOMS = ['child', 'proxy', 'policy', 'auth', 'audit', 'front'];
const BRIDGE_TOP = '(server|command|install)\\.ts$';

/** The one module of the bridge that others may import: the pod it runs in, as render builds it. */
const BRIDGE_PUBLIC = 'pod-contract\\.ts$';

/** Node modules that do I/O, which pure code must not import. */
const IO_MODULES = '^node:(fs|net|http|https|http2|child_process|dgram|dns|tls|readline)(/|$)';

function allowed(layer, may) {
  if (may.length === 0) return `src/${layer} imports no other layer, only the shared leaves`;
  return `src/${layer} may import only ${may.map((m) => `src/${m}`).join(', ')} and the shared leaves`;
}

/**
 * An import of names from `other` that loads it when the code runs: only `import type` is
 * erased whole (`import { type A }` leaves `import {}`, which still loads the module).
 */
function valueImportOf(other) {
  return `ImportDeclaration[importKind='value'][source.value=/(^|\\x2F)${other}\\x2F/][specifiers.length>0]`;
}

function layerRule(layer, { may, typesOf = [], pure = false }) {
  const others = Object.keys(LAYERS).filter((other) => other !== layer && !may.includes(other));
  const patterns = others.map((other) => ({
    regex: `(^|/)${other}/`,
    message: `${allowed(layer, may)}: see CONTRIBUTING.md, "Where the code lives".`,
  }));
  patterns.push(NO_TEST_IMPORT);
  if (may.includes('bridge')) {
    patterns.push({
      regex: `(^|/)bridge/(?!${BRIDGE_PUBLIC})`,
      message: 'Outside src/bridge only src/bridge/pod-contract.ts may be imported.',
    });
  }
  if (pure) {
    patterns.push({ regex: IO_MODULES, message: `src/${layer} is pure: no I/O.` });
  }
  const typeOnly = typesOf.map((other) => ({
    selector: valueImportOf(other),
    message: `src/${layer} takes only types from src/${other} (import type), so that what runs it need not load src/${other}.`,
  }));
  const rules = (extra = []) => ({
    'no-restricted-imports': ['error', { patterns: [...patterns, ...extra] }],
    ...(typeOnly.length === 0 ? {} : { 'no-restricted-syntax': ['error', ...typeOnly] }),
  });
  const config = { files: [`src/${layer}/**/*.ts`], rules: rules() };
  return layer === 'bridge' ? [config, ...bridgeRoomRules(rules)] : [config];
}

/** Rules that keep the rooms of src/bridge in order (BRIDGE_ROOMS); `rules` adds the layer's. */
function bridgeRoomRules(rules) {
  const see = 'see CONTRIBUTING.md, "Where the code lives"';
  const base = {
    files: ['src/bridge/*.ts'],
    ignores: ['src/bridge/server.ts', 'src/bridge/command.ts', 'src/bridge/install.ts'],
    rules: rules([
      {
        regex: `(^|/)(${BRIDGE_ROOMS.join('|')})/|^\\./${BRIDGE_TOP}`,
        message: `The files beside upstream.ts in src/bridge import no room of it: ${see}.`,
      },
    ]),
  };
  const rooms = BRIDGE_ROOMS.map((room, i) => {
    const above = BRIDGE_ROOMS.slice(i + 1);
    const below = BRIDGE_ROOMS.slice(0, i);
    const may =
      below.length === 0 ? 'no other room' : `only the rooms below it (${below.join(', ')})`;
    return {
      files: [`src/bridge/${room}/**/*.ts`],
      rules: rules([
        {
          regex: `${above.length === 0 ? '' : `(^|/)(${above.join('|')})/|`}^\\.\\./${BRIDGE_TOP}`,
          message: `src/bridge/${room} may import ${may} and the files beside upstream.ts: ${see}.`,
        },
      ]),
    };
  });
  return [base, ...rooms];
}

const leafRule = {
  files: [
    'src/errors.ts',
    'src/duration.ts',
    'src/flags.ts',
    'src/command.ts',
    'src/resolved-package.ts',
    'src/tool-record.ts',
  ],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `(^|/)(${Object.keys(LAYERS).join('|')})/`,
            message: 'A shared leaf imports no layer.',
          },
          NO_TEST_IMPORT,
        ],
      },
    ],
  },
};

/** The layer rules alone, which test/layers.test.ts checks against imports both ways. */
export const layerRules = [
  ...Object.entries(LAYERS).flatMap(([layer, rules]) => layerRule(layer, rules)),
  leafRule,
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'charts/', 'crds/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js'] } },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  ...layerRules,
  {
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
