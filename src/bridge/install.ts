/**
 * `mcp-operator bridge-install --to <dir>`: the init container of a stdio server's pod. Copies
 * the static busybox and the supervisor script from our image into the pod's emptyDir, where
 * the server container runs them (pod-contract.ts, supervisedCommand). Each file is written under a
 * temporary name and renamed, so the server container never sees half a binary.
 */

import { chmod, copyFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Command } from '../command.ts';
import { operatorError, OperatorError } from '../errors.ts';
import { BUSYBOX_FILE, IMAGE_ASSET_DIR, SUPERVISOR_FILE } from './pod-contract.ts';

/** Overrides the image's asset directory (tests, or an image laid out differently). */
export const ASSET_DIR_ENV = 'MCP_OPERATOR_ASSET_DIR';

const USAGE = `Usage: mcp-operator bridge-install --to <dir> [--from <asset dir>]

Copies ${BUSYBOX_FILE} and ${SUPERVISOR_FILE} from the asset directory (default
$${ASSET_DIR_ENV} or ${IMAGE_ASSET_DIR}) into <dir>.
`;

/** busybox must be executable by the server's user; the script is only read (`busybox sh`). */
const FILES = [
  { name: BUSYBOX_FILE, mode: 0o755 },
  { name: SUPERVISOR_FILE, mode: 0o644 },
];

export async function installBridgeFiles(from: string, to: string): Promise<void> {
  for (const file of FILES) {
    const target = join(to, file.name);
    const temporary = `${target}.tmp-${process.pid}`;
    try {
      await copyFile(join(from, file.name), temporary);
      await chmod(temporary, file.mode);
      await rename(temporary, target);
    } catch (error) {
      throw operatorError('MCPOP_BRIDGE_INSTALL', join(from, file.name), (error as Error).message);
    }
  }
}

const bridgeInstall: Command = async (argv) => {
  let to: string | undefined;
  let from: string | undefined;
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        to: { type: 'string' },
        from: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    to = values.to;
    from = values.from ?? process.env[ASSET_DIR_ENV] ?? IMAGE_ASSET_DIR;
  } catch (error) {
    process.stderr.write(`mcp-operator bridge-install: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (to === undefined) {
    process.stderr.write(`mcp-operator bridge-install: --to is required\n\n${USAGE}`);
    return 2;
  }
  try {
    await installBridgeFiles(from, to);
  } catch (error) {
    if (!(error instanceof OperatorError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  process.stdout.write(`installed ${FILES.map((file) => file.name).join(' and ')} into ${to}\n`);
  return 0;
};

export default bridgeInstall;
