/**
 * The commands `mcp-operator dev` prints for the user to run in another terminal. They must run
 * as printed from a plain shell, whose `node` may be older than the project's Node 24 (which
 * cannot run src/*.ts) and whose PATH may have no kubectl. So dev writes a directory of
 * commands — `mcp-operator` and `kubectl-mcp` as scripts that run this checkout on the Node that
 * runs dev, and the local cluster's kubectl when the machine has none — and the steps put it
 * first on PATH with one line that any POSIX shell reads.
 */
import { accessSync, constants } from 'node:fs';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/** `text` as one word of a POSIX shell command line. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Whether an executable `name` is on `path`. */
function onPath(name: string, path: string): boolean {
  return path.split(delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export interface Commands {
  /** Where to write them. */
  dir: string;
  /** The Node.js binary they run on, and the entry points in this checkout. */
  node: string;
  cli: string;
  plugin: string;
  /** The local cluster's kubectl, linked in when `kubectl` is not on `path`. */
  kubectl?: string | undefined;
  /** The PATH of the user's shell. */
  path: string;
}

/** Writes the commands the next steps run; resolves to their directory. */
export async function writeCommands({ dir, node, cli, plugin, kubectl, path }: Commands) {
  await mkdir(dir, { recursive: true });
  const script = (entry: string) => `#!/bin/sh\nexec ${shellWord(node)} ${shellWord(entry)} "$@"\n`;
  for (const [name, entry] of [
    ['mcp-operator', cli],
    ['kubectl-mcp', plugin],
  ] as const) {
    await writeFile(join(dir, name), script(entry));
    await chmod(join(dir, name), 0o755);
  }
  await rm(join(dir, 'kubectl'), { force: true });
  if (kubectl !== undefined && !onPath('kubectl', path))
    await symlink(kubectl, join(dir, 'kubectl'));
  return dir;
}

export interface NextSteps {
  /** The KUBECONFIG of a local cluster; none when dev runs against the current context. */
  kubeconfig?: string | undefined;
  /** The directory writeCommands wrote. */
  bin: string;
}

/** Each line, with its comment aligned after it. */
function commented(lines: readonly (readonly [string, string?])[]): string {
  const withComments = lines.filter(([, comment]) => comment !== undefined);
  const width = Math.max(0, ...withComments.map(([command]) => command.length)) + 2;
  return lines
    .map(([command, comment]) =>
      comment === undefined ? `  ${command}` : `  ${command.padEnd(width)}# ${comment}`,
    )
    .join('\n');
}

/** The lines that set up the user's shell: KUBECONFIG, and the commands first on PATH. */
function shellSetup({ kubeconfig, bin }: NextSteps): (readonly [string])[] {
  return [
    ...(kubeconfig === undefined ? [] : [[`export KUBECONFIG=${shellWord(kubeconfig)}`] as const]),
    [`export PATH=${shellWord(bin)}:"$PATH"`],
  ];
}

/** The next steps of the quick start: watch, approve, then diff after a change. */
export function reviewSteps(steps: NextSteps, name: string): string {
  const word = shellWord(name);
  return commented([
    ...shellSetup(steps),
    ['kubectl get mcps -w', 'READY, TOOLS and DRIFT as they change'],
    [`kubectl describe mcps ${word}`, 'what discovery found'],
    [`mcp-operator approve ${word} --apply`, 'approve the tools the server has now'],
    [`mcp-operator diff ${word}`, 'after a change: what drifted, old and new'],
    ['kubectl -n mcp-system logs -f deploy/mcp-operator'],
  ]);
}

/** The next steps when the operator runs in this process: see what it reconciles. */
export function watchSteps(steps: NextSteps): string {
  return commented([...shellSetup(steps), ['kubectl get mcpservers -A']]);
}
