import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WatchedFile } from '../../src/bridge/watched-file.ts';
import { waitFor } from '../support/wait.ts';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function capturedLogger(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino(sink), lines };
}

describe('a watched file', () => {
  it('keeps the previous value when applying a change throws, and loads the next change', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'watched-'));
    dirs.push(dir);
    const path = join(dir, 'policy');
    await writeFile(path, 'first');
    const { logger, lines } = capturedLogger();
    const applied: string[] = [];
    const watched = new WatchedFile({
      path,
      parse: (text) => text,
      logger,
      what: 'policy',
      intervalMs: 20,
      onChange: (value) => {
        if (value === 'poisoned') throw new Error('cannot apply');
        applied.push(value);
      },
    });
    await watched.start();
    try {
      // Before, this throw was an unhandled rejection from a timer, which ends the process.
      await writeFile(path, 'poisoned');
      await waitFor('the refusal', () => watched.error === 'cannot apply', { intervalMs: 20 });
      expect(watched.value).toBe('first');
      expect(
        lines.some((line) => line.includes('policy not loaded; keeping the previous one')),
      ).toBe(true);
      await writeFile(path, 'second');
      await waitFor('the next change', () => applied.includes('second'), { intervalMs: 20 });
      expect(watched.value).toBe('second');
      expect(watched.error).toBeUndefined();
    } finally {
      watched.stop();
    }
  });
});
