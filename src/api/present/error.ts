import { type Rep, rep } from './representation.ts';

export function presentError(statusCode: number, message: string): Rep {
  return rep('apiExceptionMessage', { message, statusCode });
}
