/**
 * The splitting of a watch stream into its events' lines: whole lines whatever the chunks, and
 * characters whose bytes the chunks cut apart.
 */
import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/kube/client.ts';

describe('LineSplitter', () => {
  const split = (chunks: Buffer[], end = true) => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    for (const chunk of chunks) splitter.push(chunk);
    if (end) splitter.end();
    return lines;
  };

  it('hands over each line whole, however the chunks cut it', () => {
    const text = '{"a":1}\n{"b":"two"}\n\n{"c":3}\n';
    const bytes = Buffer.from(text);
    const whole = split([bytes]);
    expect(whole).toEqual(['{"a":1}', '{"b":"two"}', '', '{"c":3}']);
    for (let at = 1; at < bytes.length; at++) {
      expect(split([bytes.subarray(0, at), bytes.subarray(at)])).toEqual(whole);
    }
    expect(split([...bytes].map((byte) => Buffer.from([byte])))).toEqual(whole);
  });

  it('decodes a character whose UTF-8 bytes the chunks cut apart', () => {
    const bytes = Buffer.from('{"name":"café ☕ 𝄞"}\n');
    for (let at = 1; at < bytes.length; at++) {
      expect(split([bytes.subarray(0, at), bytes.subarray(at)])).toEqual(['{"name":"café ☕ 𝄞"}']);
    }
  });

  it('keeps a last line without its newline until the stream ends', () => {
    expect(split([Buffer.from('{"a":1}\n{"b":')], false)).toEqual(['{"a":1}']);
    expect(split([Buffer.from('{"a":1}\n{"b":'), Buffer.from('2}')])).toEqual([
      '{"a":1}',
      '{"b":2}',
    ]);
  });
});
