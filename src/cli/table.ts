/** Readable output for people: aligned columns, durations and sizes. */

export function table(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number | null>>): string {
  const cells = rows.map((row) => row.map((cell) => (cell === null ? '' : String(cell))));
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...cells.map((row) => row[column]?.length ?? 0)),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function seconds(ms: number): string {
  const total = Math.round(ms / 1000);
  return total < 60 ? `${total}s` : `${Math.floor(total / 60)}m${String(total % 60).padStart(2, '0')}s`;
}

export function when(epochMs: number | null): string {
  return epochMs === null ? '' : new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ');
}
