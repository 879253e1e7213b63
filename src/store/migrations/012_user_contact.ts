/**
 * The contact fields of an account that the established API's user record carries and `POST /me`
 * edits (docs/api.md#users): street address, city, postal code, state or region, phone and VAT id.
 * All optional text; existing accounts get none.
 */
import type { Kysely } from 'kysely';

const COLUMNS = ['address', 'city', 'code', 'state', 'phone', 'vat_id'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement per column: SQLite adds one column per ALTER TABLE.
  for (const column of COLUMNS) await db.schema.alterTable('users').addColumn(column, 'text').execute();
}
