import { describe, expect, it } from 'vitest';
import { prefersJson } from '../../src/api/plugins/negotiate.ts';

describe('format negotiation', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['application/xml', false],
    ['text/xml', false],
    ['text/html', false],
    ['application/json', true],
    ['application/json, text/plain, */*', true],
    ['APPLICATION/JSON; charset=utf-8', true],
    ['application/json;q=0', false],
    ['application/xml;q=0.9, application/json;q=0.5', false],
    ['application/xml;q=0.5, application/json;q=0.9', true],
    ['application/xml, application/json', true],
    ['application/json;q=abc', false],
  ])('Accept %s → JSON %s', (accept, json) => {
    expect(prefersJson(accept)).toBe(json);
  });
});
