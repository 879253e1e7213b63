/**
 * The authorization matrix on SQLite (test/support/authz-suite.ts; on PostgreSQL:
 * authz-matrix-postgres.test.ts): every route of the route table (in its aliases), the operators'
 * routes, the agent protocol, OAuth and the dashboard's session, each called with no credentials,
 * a wrong key, another user's key, the owner's key (and the owner's OAuth token and session
 * cookie, which must be worth exactly the key), and an operator's key. The table is read at run
 * time, so a route added tomorrow is covered tomorrow.
 *
 * Beside it: blob-directory.test.ts (file names cannot place bytes outside the blob directory) and
 * server-log-secrets.test.ts (secrets never reach the log of a real server process).
 */
import { describeAuthzMatrix } from '../support/authz-suite.ts';

describeAuthzMatrix('sqlite');
