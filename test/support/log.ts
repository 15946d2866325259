/**
 * The logger of every operator and bridge a test runs in-process: silent, unless
 * MCP_OPERATOR_TEST_LOG names a pino level (`MCP_OPERATOR_TEST_LOG=debug npx vitest run …`).
 */

import { pino, type Logger } from 'pino';

export const testLogger = (): Logger =>
  pino({ level: process.env.MCP_OPERATOR_TEST_LOG ?? 'silent' });
