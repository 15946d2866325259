// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/ and what each may import, lowest first; see README.md, "Where the code
 * lives". An import against the direction fails the lint. Shared leaves (errors.ts,
 * duration.ts, flags.ts, command.ts, resolved-package.ts, tool-record.ts) import no layer.
 */
export const LAYERS = {
  api: { may: [] },
  kube: { may: [] },
  mcp: { may: [] },
  tools: { may: ['api', 'mcp'], pure: true },
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

/** The one module of the bridge that others may import: the pod it runs in, as render builds it. */
const BRIDGE_PUBLIC = 'pod-contract\\.ts$';

/** Node modules that do I/O, which pure code must not import. */
const IO_MODULES = '^node:(fs|net|http|https|http2|child_process|dgram|dns|tls|readline)(/|$)';

function allowed(layer, may) {
  if (may.length === 0) return `src/${layer} imports no other layer, only the shared leaves`;
  return `src/${layer} may import only ${may.map((m) => `src/${m}`).join(', ')} and the shared leaves`;
}

function layerRule(layer, { may, pure = false }) {
  const others = Object.keys(LAYERS).filter((other) => other !== layer && !may.includes(other));
  const patterns = others.map((other) => ({
    regex: `(^|/)${other}/`,
    message: `${allowed(layer, may)}: see README.md, "Where the code lives".`,
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
  return {
    files: [`src/${layer}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  };
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
  ...Object.entries(LAYERS).map(([layer, rules]) => layerRule(layer, rules)),
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
