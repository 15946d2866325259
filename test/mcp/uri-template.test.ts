/**
 * Which URIs a resource template stands for (RFC 6570), as the bridge's policy decides whether a
 * resources/read belongs to an approved template. Examples from RFC 6570 §3.2 (variables
 * `var = "value"`, `hello = "Hello World!"`, `path = "/foo/bar"`, `list = ("red", "green",
 * "blue")`, `keys = [("semi",";"),("dot","."),("comma",",")]`).
 */
import { describe, expect, it } from 'vitest';
import { compileUriTemplate } from '../../src/mcp/uri-template.ts';

const matches = (template: string, uri: string) => {
  const matcher = compileUriTemplate(template);
  if (matcher === undefined) throw new Error(`${template} did not compile`);
  return matcher(uri);
};

describe('URI templates (RFC 6570)', () => {
  it.each([
    ['{var}', 'value'],
    ['{hello}', 'Hello%20World%21'],
    ['{+hello}', 'Hello%20World!'],
    ['{+path}/here', '/foo/bar/here'],
    ['{#path,x}/here', '#/foo/bar,1024/here'],
    ['X{.var}', 'X.value'],
    ['X{.list*}', 'X.red.green.blue'],
    ['{/var,x}/here', '/value/1024/here'],
    ['{;keys*}', ';semi=%3B;dot=.;comma=%2C'],
    ['{?x,y,empty}', '?x=1024&y=768&empty='],
    ['?fixed=yes{&x}', '?fixed=yes&x=1024'],
    ['{var:3}', 'val'],
    ['{keys}', 'semi,%3B,dot,.,comma,%2C'],
    ['demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/text/42'],
    // Undefined variables expand to nothing, operator included (§3.2.1).
    ['map?{x,y}', 'map?'],
    ['X{.var}', 'X'],
    ['{/var}/here', '/here'],
  ])('%s matches %s', (template, uri) => {
    expect(matches(template, uri)).toBe(true);
  });

  it.each([
    // A simple expansion percent-encodes reserved characters, so it never crosses a path,
    // query or fragment delimiter: a template for one segment does not reach others.
    ['demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/text/1/../../secret'],
    ['demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/text/1?x=y'],
    ['demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/blob/1'],
    ['file:///{name}', 'file:///etc/passwd'],
    ['{hello}', 'Hello World!'],
    ['X{.var}', 'Xvalue'],
    ['{?x}', '&x=1'],
    // Characters outside URIs never come from an expansion.
    ['{+path}', '/foo/bär'],
    ['a{x}b', 'ab!'],
  ])('%s does not match %s', (template, uri) => {
    expect(matches(template, uri)).toBe(false);
  });

  it.each([
    ['unclosed', 'demo://{id'],
    ['empty expression', 'demo://{}'],
    ['reserved operator', 'demo://{=id}'],
    ['bad variable name', 'demo://{a-b}'],
    ['bad prefix', 'demo://{id:0}'],
    ['space', 'demo://{ id}'],
  ])('refuses a malformed template (%s): it matches nothing', (_what, template) => {
    expect(compileUriTemplate(template)).toBeUndefined();
  });

  it('refuses encoded separators and dot segments in what the variables hold', () => {
    const simple = compileUriTemplate('file:///data/{id}')!;
    const reserved = compileUriTemplate('file:///data/{+path}')!;
    expect(simple('file:///data/report.txt')).toBe(true);
    expect(reserved('file:///data/a/b.txt')).toBe(true);
    for (const uri of [
      'file:///data/..%2Fsecrets',
      'file:///data/..%2fsecrets',
      'file:///data/%2E%2E',
      'file:///data/..',
      'file:///data/a%5Cb',
    ]) {
      expect(simple(uri), uri).toBe(false);
    }
    for (const uri of [
      'file:///data/../etc/passwd',
      'file:///data/a/./b',
      'file:///data/%2e%2e/x',
    ]) {
      expect(reserved(uri), uri).toBe(false);
    }
  });

  it('answers in linear time, whatever template and URI a server and a client send', () => {
    // A backtracking matcher tries every split of the URI between a, b and c: O(n^3) for this
    // pair, which never ends at this size.
    const uri = `x://${'a'.repeat(200_000)}/`;
    expect(matches('x://{a}{b}{c}', uri)).toBe(false);
    expect(matches('x://{a}{b}{c}/', uri)).toBe(true);
    expect(matches('x://{a}a{b}a{c}a{d}b', uri)).toBe(false);
  });
});
