/**
 * Where the operator's time goes, from a V8 CPU profile (`--cpu-prof`, e.g. bench:controller's
 * `--node-options="--cpu-prof --cpu-prof-dir=<dir>"`): each sample is put in the category of the
 * nearest frame on its stack that names one (garbage collection, logging, the applied hash,
 * render, watch decoding, …), so a category counts what it calls unless that has a category of
 * its own. The samples are of the main thread's wall time: a blocking write counts as busy.
 *
 *   node bench/cpu-profile.ts <file.cpuprofile> [--top=20]
 *
 * Prints the busy time by category, then in the largest categories by function (self time) and
 * by call path: the function and the operator's own frames nearest to it, which tell what
 * called into a library or into Node.
 */
import { readFile } from 'node:fs/promises';
import { reportArgs } from './report-args.ts';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  /** Microseconds before each sample. */
  timeDeltas: number[];
}

const IDLE = '(idle)';
const OTHER = 'other';

/** Categories, in the order they are tried on each frame from the leaf up. */
const CATEGORIES: [name: string, matches: (frame: CallFrame) => boolean][] = [
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  [IDLE, (f) => f.functionName === IDLE],
  ['logging', (f) => /\/(pino|sonic-boom)\//.test(f.url)],
  ['metrics', (f) => /\/prom-client\//.test(f.url)],
  [
    'applied hash',
    (f) =>
      /^(appliedHash|sortedKeys)$/.test(f.functionName) ||
      (f.functionName === 'desired' && /\/controller\/apply-memo\./.test(f.url)),
  ],
  // The rest of apply.ts is needsApply: covers and its helpers.
  ['needsApply (covers)', (f) => /\/kube\/apply\./.test(f.url) || f.functionName === 'needsApply'],
  ['render', (f) => /\/controller\/render\/|\/bridge\//.test(f.url)],
  ['status', (f) => /^(#writeStatus|computeStatus|statusDiffers)$/.test(f.functionName)],
  ['discovery', (f) => /\/discovery\//.test(f.url)],
  [
    'watch: decode and cache',
    (f) =>
      /\/kube\/(reflector|store|informer)\./.test(f.url) ||
      (f.functionName === 'watch' && /\/kube\/client\./.test(f.url)),
  ],
  [
    'requests: build and parse',
    (f) => /\/kube\/client\./.test(f.url) && /^(request|#open|readBody)$/.test(f.functionName),
  ],
  ['reconcile, other', (f) => /\/(controller|kube)\//.test(f.url)],
  ['module loading', (f) => /^node:internal\/(modules|bootstrap)\//.test(f.url)],
  [
    'HTTP, TLS and streams (Node)',
    (f) => /^node:(_http|https?$|net$|tls$|internal\/(stream|tls|url)|events$)/.test(f.url),
  ],
];

export function categoryOf(stack: CallFrame[]): string {
  for (const frame of stack) {
    const hit = CATEGORIES.find(([, matches]) => matches(frame));
    if (hit !== undefined) return hit[0];
  }
  return OTHER;
}

const frameName = (f: CallFrame) =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|src|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;

/** The operator's own code, as built or as source. */
const isOurs = (f: CallFrame) => /\/(dist|src)\//.test(f.url) && !f.url.includes('/node_modules/');

/** Frames of the operator's own code a path names above the function itself. */
const PATH_CALLERS = 3;

/**
 * The function a sample is in, then the nearest frames of the operator's own code above it
 * (`leaf ← caller ← …`): what asked a library or Node for the work.
 */
export function callPath(stack: readonly CallFrame[]): string {
  const [leaf, ...callers] = stack;
  if (leaf === undefined) return '(empty)';
  const ours = callers.filter(isOurs).slice(0, PATH_CALLERS);
  return [leaf, ...ours].map(frameName).join(' ← ');
}

/** One sample: its stack, leaf first, and what it weighs (microseconds, bytes). */
export interface WeightedStack {
  stack: CallFrame[];
  weight: number;
}

export interface Summary {
  /** Weight of the samples that were not idle. */
  busy: number;
  byCategory: Map<string, number>;
  /** Self weight by function, within each category. */
  byFunction: Map<string, Map<string, number>>;
  /** Self weight by call path (callPath), within each category. */
  byPath: Map<string, Map<string, number>>;
}

const addTo = (maps: Map<string, Map<string, number>>, outer: string, inner: string, n: number) => {
  const map = maps.get(outer) ?? new Map<string, number>();
  map.set(inner, (map.get(inner) ?? 0) + n);
  maps.set(outer, map);
};

export function summarizeStacks(samples: Iterable<WeightedStack>): Summary {
  const summary: Summary = {
    busy: 0,
    byCategory: new Map(),
    byFunction: new Map(),
    byPath: new Map(),
  };
  for (const { stack, weight } of samples) {
    const category = categoryOf(stack);
    if (category === IDLE) continue;
    summary.busy += weight;
    summary.byCategory.set(category, (summary.byCategory.get(category) ?? 0) + weight);
    addTo(summary.byFunction, category, frameName(stack[0]!), weight);
    addTo(summary.byPath, category, callPath(stack), weight);
  }
  return summary;
}

function* cpuSamples(profile: CpuProfile): Generator<WeightedStack> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  const stackOf = (id: number): CallFrame[] => {
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      stack.push(byId.get(at)!.callFrame);
    }
    return stack;
  };
  for (const [i, id] of profile.samples.entries()) {
    yield { stack: stackOf(id), weight: profile.timeDeltas[i] ?? 0 };
  }
}

/** Microseconds by category, function and call path. */
export const summarize = (profile: CpuProfile): Summary => summarizeStacks(cpuSamples(profile));

const largestFirst = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);

/** How a report shows a weight: e.g. seconds from microseconds, with the unit. */
export interface Unit {
  format: (weight: number) => string;
  name: string;
}

export function printSummary(summary: Summary, top: number, unit: Unit, what: string): void {
  const amount = (weight: number) => unit.format(weight).padStart(8);
  const share = (weight: number) => ((100 * weight) / summary.busy).toFixed(1).padStart(5);
  console.log(`${what} ${amount(summary.busy).trim()} ${unit.name}`);
  const categories = largestFirst(summary.byCategory);
  for (const [name, weight] of categories)
    console.log(`${amount(weight)} ${unit.name} ${share(weight)}%  ${name}`);
  for (const [name] of categories.slice(0, 6)) {
    console.log(`\n${name}, self ${unit.name} by function:`);
    for (const [fn, weight] of largestFirst(summary.byFunction.get(name)!).slice(0, top)) {
      console.log(`${amount(weight)} ${unit.name}  ${fn}`);
    }
    console.log(`\n${name}, self ${unit.name} by call path (function ← our callers):`);
    for (const [path, weight] of largestFirst(summary.byPath.get(name)!).slice(0, top)) {
      console.log(`${amount(weight)} ${unit.name}  ${path}`);
    }
  }
}

async function main(): Promise<void> {
  const { input: file, top } = reportArgs(
    process.argv.slice(2),
    'node bench/cpu-profile.ts <file.cpuprofile> [--top=20]',
    20,
  );
  const summary = summarize(JSON.parse(await readFile(file, 'utf8')) as CpuProfile);
  const seconds = { format: (micros: number) => (micros / 1e6).toFixed(2), name: 's' };
  printSummary(summary, top, seconds, 'busy (main thread)');
}

if (import.meta.main) await main();
