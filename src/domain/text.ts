/**
 * Rules for free text that users send (names, descriptions). XML 1.0 cannot carry most C0 control
 * characters, not even as character references, so text holding them could not round-trip through
 * the XML encoding: it is refused at the door with a message naming the parameter. Tab, line feed
 * and carriage return are fine.
 */
import { InvalidParameterError } from './errors.ts';
import { NOT_XML_CHARACTER } from './xml-text.ts';

export interface TextRule {
  readonly maxLength: number;
  /** Reject an empty value (after trimming) instead of accepting it. */
  readonly required?: boolean;
}

/** Checks one text parameter and returns it trimmed. */
export function checkText(parameter: string, value: string, rule: TextRule): string {
  if (NOT_XML_CHARACTER.test(value)) {
    throw new InvalidParameterError(parameter, `Parameter '${parameter}' must not contain control characters`);
  }
  const trimmed = value.trim();
  if (rule.required && trimmed === '') {
    throw new InvalidParameterError(parameter, `Parameter '${parameter}' must not be empty`);
  }
  if (trimmed.length > rule.maxLength) {
    throw new InvalidParameterError(
      parameter,
      `Parameter '${parameter}' must be at most ${rule.maxLength} characters long`,
    );
  }
  return trimmed;
}

/** Matches a value against a closed set, case-insensitively, and returns the canonical spelling. */
export function checkEnum<T extends string>(parameter: string, value: string, allowed: readonly T[]): T {
  const match = allowed.find((candidate) => candidate.toLowerCase() === value.trim().toLowerCase());
  if (match === undefined) {
    throw new InvalidParameterError(
      parameter,
      `Parameter '${parameter}' must be one of ${allowed.join(', ')}; got '${value.slice(0, 60)}'`,
    );
  }
  return match;
}
