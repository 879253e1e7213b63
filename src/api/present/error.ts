import { xmlSafe } from '../../domain/xml-text.ts';
import { type Rep, rep } from './representation.ts';

/**
 * Messages often quote what the client sent, which may hold characters XML 1.0 cannot carry:
 * they are shown as \uXXXX here already rather than only by the XML encoder, so that the message
 * reads the same in both formats.
 */
export function presentError(statusCode: number, message: string): Rep {
  return rep('apiExceptionMessage', { message: xmlSafe(message), statusCode });
}
