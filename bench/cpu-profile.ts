/**
 * Where the operator's time goes, from a V8 CPU profile (`--cpu-prof`, e.g. bench:controller's
 * `--node-options="--cpu-prof --cpu-prof-dir=<dir>"`): each sample is put in the category of the
 * nearest frame on its stack that names one (garbage collection, logging, the applied hash,
 * render, watch decoding, …), so a category counts what it calls unless that has a category of
 * its own. The samples are of the main thread's wall time: a blocking write counts as busy.
 *
 *   node bench/cpu-profile.ts <file.cpuprofile> [--top=20]
 *
 * Prints the busy time by category, then by function (self time) in the largest categories.
 */
import { readFile } from 'node:fs/promises';
import { reportArgs } from './report-args.ts';

interface CallFrame {
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
  ['applied hash', (f) => /^(appliedHash|withHashes|sortedKeys)$/.test(f.functionName)],
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

function categoryOf(stack: CallFrame[]): string {
  for (const frame of stack) {
    const hit = CATEGORIES.find(([, matches]) => matches(frame));
    if (hit !== undefined) return hit[0];
  }
  return OTHER;
}

const frameName = (f: CallFrame) =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|src|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;

export interface Summary {
  /** Microseconds of samples that were not idle. */
  busy: number;
  byCategory: Map<string, number>;
  /** Self time by function, within each category. */
  byFunction: Map<string, Map<string, number>>;
}

export function summarize(profile: CpuProfile): Summary {
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
  const summary: Summary = { busy: 0, byCategory: new Map(), byFunction: new Map() };
  for (const [i, id] of profile.samples.entries()) {
    const stack = stackOf(id);
    const category = categoryOf(stack);
    if (category === IDLE) continue;
    const micros = profile.timeDeltas[i] ?? 0;
    summary.busy += micros;
    summary.byCategory.set(category, (summary.byCategory.get(category) ?? 0) + micros);
    const functions = summary.byFunction.get(category) ?? new Map<string, number>();
    const name = frameName(stack[0]!);
    functions.set(name, (functions.get(name) ?? 0) + micros);
    summary.byFunction.set(category, functions);
  }
  return summary;
}

const largestFirst = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);

function print(summary: Summary, top: number): void {
  const seconds = (micros: number) => (micros / 1e6).toFixed(2).padStart(8);
  const share = (micros: number) => ((100 * micros) / summary.busy).toFixed(1).padStart(5);
  console.log(`busy ${seconds(summary.busy).trim()} s (main thread)`);
  const categories = largestFirst(summary.byCategory);
  for (const [name, micros] of categories)
    console.log(`${seconds(micros)} s ${share(micros)}%  ${name}`);
  for (const [name] of categories.slice(0, 6)) {
    console.log(`\n${name}, self time by function:`);
    for (const [fn, micros] of largestFirst(summary.byFunction.get(name)!).slice(0, top)) {
      console.log(`${seconds(micros)} s  ${fn}`);
    }
  }
}

async function main(): Promise<void> {
  const { input: file, top } = reportArgs(
    process.argv.slice(2),
    'node bench/cpu-profile.ts <file.cpuprofile> [--top=20]',
    20,
  );
  print(summarize(JSON.parse(await readFile(file, 'utf8')) as CpuProfile), top);
}

if (import.meta.main) await main();
