/**
 * The few column types that differ between the engines. Migrations are written once against this
 * and run on both: integer rowids on SQLite, bigint identities on PostgreSQL.
 */
import type { ColumnDefinitionBuilder } from 'kysely';
import type { Dialect } from '../db.ts';

export interface ColumnTypes {
  readonly id: 'integer' | 'bigint';
  readonly timestamp: 'integer' | 'bigint';
  primaryKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
}

export function columnTypes(dialect: Dialect): ColumnTypes {
  if (dialect === 'sqlite') {
    return { id: 'integer', timestamp: 'integer', primaryKey: (c) => c.primaryKey().autoIncrement() };
  }
  return { id: 'bigint', timestamp: 'bigint', primaryKey: (c) => c.primaryKey().generatedByDefaultAsIdentity() };
}
