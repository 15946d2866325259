import { describe, expect, it } from 'vitest';
import { parseDuration } from '../src/duration.ts';

describe('parseDuration', () => {
  it('reads Go durations, compound ones too', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1.5s')).toBe(1500);
  });

  it('refuses what is not one', () => {
    for (const bad of ['', '5', 'm', '5 m', '-5s', '5d', '5m junk']) {
      expect(parseDuration(bad)).toBeUndefined();
    }
  });
});
