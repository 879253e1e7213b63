import Type from 'typebox';
import { xmlSafe } from '../../domain/xml-text.ts';
import { type Rep, entity, entitySchema } from './representation.ts';

/** Every error answer (4xx and 5xx) of the API, whatever raised it (plugins/errors.ts). */
export const ApiError = entitySchema('apiExceptionMessage', {
  message: Type.String(),
  statusCode: Type.Integer({ minimum: 400, maximum: 599 }),
});

/**
 * Messages often quote what the client sent, which may hold characters XML 1.0 cannot carry:
 * they are shown as \uXXXX here already rather than only by the XML encoder, so that the message
 * reads the same in both formats.
 */
export function presentError(statusCode: number, message: string): Rep {
  return entity(ApiError, { message: xmlSafe(message), statusCode });
}
