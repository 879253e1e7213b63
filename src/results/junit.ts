/**
 * Reads JUnit XML, the results format nearly every test framework can write: a single
 * <testsuite>, a <testsuites> of them, or suites nested in suites (JUnit 4/5 Ant style, Maven
 * Surefire, pytest --junitxml, jest-junit, XCTest converters). <failure> and <error> are both
 * failures of the test; <skipped/> is a skip; times are seconds.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { TestCase } from '../domain/test-cases.ts';

const ARRAYS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  textNodeName: '#text',
  isArray: (name) => ARRAYS.has(name),
  processEntities: true,
});

type Node = Record<string, unknown>;

export function parseJUnit(xml: string): TestCase[] {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Error(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  const document = parser.parse(xml) as Node;
  const roots = document.testsuites !== undefined ? (document.testsuites as Node) : document;
  const suites = asArray(roots.testsuite);
  if (document.testsuites === undefined && document.testsuite === undefined)
    throw new Error('no <testsuite> or <testsuites> element');
  const cases: TestCase[] = [];
  for (const suite of suites) collect(suite, cases);
  return cases;
}

function collect(suite: Node, into: TestCase[]): void {
  const suiteName = text(suite['@name']);
  for (const testcase of asArray(suite.testcase)) into.push(toTestCase(testcase, suiteName));
  for (const nested of asArray(suite.testsuite)) collect(nested, into);
}

function toTestCase(node: Node, suiteName: string | null): TestCase {
  const failure = [...asArray(node.failure), ...asArray(node.error)][0];
  const skipped = asArray(node.skipped).length > 0;
  const seconds = Number(text(node['@time']) ?? 0);
  const body = failure === undefined ? null : text(failure['#text']);
  const message = failure === undefined ? null : text(failure['@message']);
  return {
    suiteName,
    className: text(node['@classname']) ?? suiteName ?? 'unknown',
    methodName: text(node['@name']) ?? 'unnamed',
    duration: Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0,
    result: failure !== undefined ? 'FAILED' : skipped ? 'SKIPPED' : 'PASSED',
    errorMessage: failure === undefined ? null : (message ?? firstLine(body)),
    stacktrace: body === null ? null : body.trim() === '' ? null : body.trim(),
  };
}

function asArray(value: unknown): Node[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map((item) =>
    typeof item === 'object' && item !== null ? (item as Node) : ({ '#text': item } as Node),
  );
}

function text(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return String(value);
}

function firstLine(body: string | null): string | null {
  const line = body?.trim().split('\n')[0]?.trim();
  return line === undefined || line === '' ? null : line;
}
