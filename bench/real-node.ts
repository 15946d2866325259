/**
 * `npm run bench:real-node [-- N]`: how long a stdio MCPServer takes on a real node, from
 * `kubectl apply` to Ready and to its first discovery, for N servers (default 10) applied at
 * once. Everything is real: a control plane with a real node, our image installed by the chart,
 * the bridge sidecar and the supervisor in each server's pod, discovery from the operator's pod.
 *
 * Prints p50/p90/max of both intervals, the machine's load average before and after (these
 * machines are shared and noisy), and the image sizes involved.
 */
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { dump } from 'js-yaml';
import { ensureBinaries } from '../test/cluster/build.ts';
import { ControlPlane } from '../test/cluster/control-plane.ts';
import { installChart, everyImage } from '../test/cluster/deploy.ts';
import { ON_REAL_NODE, loadImages } from '../test/cluster/node.ts';
import { runWithInput } from '../test/cluster/processes.ts';
import { DOCKER_CLI, ensureDocker } from '../test/images/docker.ts';
import { ensureImages } from '../test/images/images.ts';

const execFileAsync = promisify(execFile);
const count = Number(process.argv[2] ?? 10);
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Timing {
  ready?: number;
  discovered?: number;
}

interface ServerStatus {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[] };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);

async function imageSize(image: string): Promise<string> {
  const { stdout } = await execFileAsync(DOCKER_CLI, [
    'image',
    'inspect',
    '--format',
    '{{.Size}}',
    image,
  ]);
  return `${(Number(stdout) / 1e6).toFixed(0)} MB`;
}

const binaries = await ensureBinaries();
const docker = await ensureDocker({ log });
const images = await ensureImages(log);
const plane = await ControlPlane.start({ binaries, realNode: true, log });
try {
  const kubeconfig = plane.kubeconfigPath;
  await loadImages(plane.containerdSocket!, everyImage(images), log);
  await installChart(kubeconfig, images.operator, log);

  const servers = Array.from({ length: count }, (_, i) => ({
    apiVersion: 'mcp-operator.dev/v1alpha1',
    kind: 'MCPServer',
    metadata: { name: `bench-${i}`, namespace: 'default' },
    spec: {
      image: images.servers.everything,
      transport: 'stdio',
      command: ['mcp-server-everything'],
      pod: ON_REAL_NODE,
    },
  }));
  const loadBefore = loadavg()[0]!;
  const applied = Date.now();
  await runWithInput(
    binaries.kubectl,
    ['--kubeconfig', kubeconfig, 'apply', '-f', '-'],
    servers.map((s) => dump(s)).join('---\n'),
  );
  const timings = new Map<string, Timing>(servers.map((s) => [s.metadata.name, {}]));
  const deadline = applied + 10 * 60_000;
  while ([...timings.values()].some((t) => t.discovered === undefined) && Date.now() < deadline) {
    const { stdout } = await execFileAsync(
      binaries.kubectl,
      ['--kubeconfig', kubeconfig, 'get', 'mcps', '-o', 'json'],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const now = Date.now() - applied;
    for (const server of (JSON.parse(stdout) as { items: ServerStatus[] }).items) {
      const timing = timings.get(server.metadata.name);
      const isTrue = (type: string) =>
        server.status?.conditions?.some((c) => c.type === type && c.status === 'True');
      if (timing === undefined) continue;
      if (timing.ready === undefined && isTrue('Ready')) timing.ready = now;
      if (timing.discovered === undefined && isTrue('Discovered')) timing.discovered = now;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const all = [...timings.values()];
  const row = (what: string, values: (number | undefined)[]) => {
    const done = values.filter((v): v is number => v !== undefined);
    console.log(
      `| ${what} | ${done.length}/${values.length} | ${seconds(percentile(done, 50))} s | ${seconds(percentile(done, 90))} s | ${seconds(Math.max(...done))} s |`,
    );
  };
  console.log(`\n${count} stdio MCPServers applied at once on the real node`);
  console.log('| interval | servers | p50 | p90 | max |');
  console.log('|---|---|---|---|---|');
  row(
    'apply → Ready',
    all.map((t) => t.ready),
  );
  row(
    'apply → first discovery',
    all.map((t) => t.discovered),
  );
  console.log(
    `\nload average (1 min): ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`,
  );
  console.log(
    `images: ${images.operator} ${await imageSize(images.operator)}, ${images.servers.everything} ${await imageSize(images.servers.everything)}`,
  );
} finally {
  await plane.stop();
  await docker.stop();
}
