/**
 * The few column types that differ between the engines. Migrations are written once against this
 * and run on both: integer rowids on SQLite, bigint identities on PostgreSQL.
 */
import type { ColumnDefinitionBuilder } from 'kysely';
import type { Dialect } from '../db.ts';

export interface ColumnTypes {
  /** For the rare step written differently per engine (SQLite cannot alter a column). */
  readonly dialect: Dialect;
  readonly id: 'integer' | 'bigint';
  readonly timestamp: 'integer' | 'bigint';
  primaryKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
}

export function columnTypes(dialect: Dialect): ColumnTypes {
  if (dialect === 'sqlite') {
    return { dialect, id: 'integer', timestamp: 'integer', primaryKey: (c) => c.primaryKey().autoIncrement() };
  }
  return {
    dialect,
    id: 'bigint',
    timestamp: 'bigint',
    primaryKey: (c) => c.primaryKey().generatedByDefaultAsIdentity(),
  };
}
