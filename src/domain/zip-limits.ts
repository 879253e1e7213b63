/**
 * What an uploaded zip (test package, APK, IPA, data) may hold: checked at upload and again by the
 * agent while unpacking (files/zip.ts), set by the settings (config.ts). Plain values, so that the
 * settings name them without loading the zip reader.
 */

export interface ZipLimits {
  readonly maxEntries: number;
  /** Sum of the uncompressed sizes of all entries. */
  readonly maxTotalBytes: number;
  /**
   * Largest uncompressed/compressed ratio (a bomb compresses ~1000:1), of one entry over 1 MiB and
   * of the whole archive once it expands beyond 64 MiB: a thousand small bombs are one big one.
   */
  readonly maxRatio: number;
}

/** The settings' defaults (config.ts: zipMaxEntries, zipMaxExpandedBytes, zipMaxRatio). */
export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 20_000, maxTotalBytes: 4 * 1024 ** 3, maxRatio: 200 };
