/** Which store errors mean "the database is not there for a moment" (503, retry) rather than a bug (500). */
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/domain/errors.ts';
import { asUnavailable } from '../../src/store/unavailable.ts';

const error = (message: string, code?: string) => Object.assign(new Error(message), code === undefined ? {} : { code });

describe('asUnavailable', () => {
  it.each([
    ['a restart by an operator', error('terminating connection due to administrator command', '57P01')],
    ['a crash shutdown', error('terminating connection because of crash of another server process', '57P02')],
    ['a server still starting', error('the database system is starting up', '57P03')],
    ['too many connections', error('sorry, too many clients already', '53300')],
    ['a broken connection (class 08)', error('connection failure', '08006')],
    ['a refused connection', error('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset connection', error('read ECONNRESET', 'ECONNRESET')],
    ['a connection cut mid-statement', error('Connection terminated unexpectedly')],
    ['a lost connection used again', error('Client has encountered a connection error and is not queryable')],
    ['SQLite locked beyond busy_timeout', error('database is locked', 'SQLITE_BUSY')],
  ])('takes %s for a moment without the database', (_what, cause) => {
    const unavailable = asUnavailable(cause);
    expect(unavailable).toBeInstanceOf(UnavailableError);
    expect(unavailable!.statusCode).toBe(503);
    expect(unavailable!.cause).toBe(cause);
  });

  it.each([
    ['a unique violation', error('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', error('syntax error at or near "FROM"', '42601')],
    ['a constraint of SQLite', error('FOREIGN KEY constraint failed', 'SQLITE_CONSTRAINT_FOREIGNKEY')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error at all', undefined],
  ])('takes %s for what it is', (_what, cause) => {
    expect(asUnavailable(cause)).toBeUndefined();
  });
});
