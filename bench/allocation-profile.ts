/**
 * What a process allocated, from a sampled heap profile with garbage included
 * (bench/allocation-sampler.ts): bytes by the categories of bench/cpu-profile.ts, then in the
 * largest categories by function and by call path. Garbage collection costs in proportion to
 * what is allocated (and survives a while), and a CPU profile cannot say who allocated: its
 * collector samples sit at the root of the tree.
 *
 *   node bench/allocation-profile.ts <file.heapprofile> [--top=20]
 */
import { readFile } from 'node:fs/promises';
import {
  printSummary,
  summarizeStacks,
  type CallFrame,
  type Summary,
  type WeightedStack,
} from './cpu-profile.ts';
import { reportArgs } from './report-args.ts';

interface HeapNode {
  id: number;
  callFrame: CallFrame;
  children: HeapNode[];
}

/** V8's SamplingHeapProfile: a call tree, and one entry per sampled allocation. */
export interface HeapProfile {
  head: HeapNode;
  samples: { size: number; nodeId: number }[];
}

function* heapSamples(profile: HeapProfile): Generator<WeightedStack> {
  const stackById = new Map<number, CallFrame[]>();
  const walk = (node: HeapNode, callers: CallFrame[]) => {
    const stack = [node.callFrame, ...callers];
    stackById.set(node.id, stack);
    for (const child of node.children) walk(child, stack);
  };
  walk(profile.head, []);
  for (const { size, nodeId } of profile.samples) {
    yield { stack: stackById.get(nodeId) ?? [], weight: size };
  }
}

/** Bytes allocated by category, function and call path. */
export const summarizeAllocations = (profile: HeapProfile): Summary =>
  summarizeStacks(heapSamples(profile));

async function main(): Promise<void> {
  const { input: file, top } = reportArgs(
    process.argv.slice(2),
    'node bench/allocation-profile.ts <file.heapprofile> [--top=20]',
    20,
  );
  const summary = summarizeAllocations(JSON.parse(await readFile(file, 'utf8')) as HeapProfile);
  const mebibytes = { format: (bytes: number) => (bytes / 2 ** 20).toFixed(1), name: 'MiB' };
  printSummary(summary, top, mebibytes, 'allocated (sampled, garbage included)');
}

if (import.meta.main) await main();
