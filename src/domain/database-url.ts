/** Which database a URL selects: a postgres:// or postgresql:// URL is PostgreSQL; without one, SQLite. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}
