/**
 * Freezes a value made of plain data (objects and arrays, as JSON.parse and the presenters make
 * them) all the way down, so that one shared copy can be handed to many readers. Only plain
 * objects and arrays are frozen: an object of any other kind, and above all a built-in prototype,
 * is left as it is; freezing Object.prototype would break every module loaded after it.
 */
export function deepFreeze<T>(value: T): T {
  if (!isPlainData(value) || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const field of Object.values(value)) deepFreeze(field);
  return value;
}

function isPlainData(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (value === Object.prototype || value === Array.prototype) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === Array.prototype || prototype === null;
}
