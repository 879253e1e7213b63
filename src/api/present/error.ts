import { type Rep, rep } from './representation.ts';

// eslint-disable-next-line no-control-regex
const UNWRITABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Messages often quote what the client sent, which may hold characters XML 1.0 cannot carry even
 * as references (domain/text.ts keeps them out of stored text, not out of refused input): they are
 * shown as \uXXXX, so the answer stays readable in both formats.
 */
export function presentError(statusCode: number, message: string): Rep {
  const shown = message.replace(UNWRITABLE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return rep('apiExceptionMessage', { message: shown, statusCode });
}
