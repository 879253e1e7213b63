/**
 * What a user may change on a test run and on a file after the fact (docs/api.md#renaming-runs-and-files):
 * a run's display name, a file's name. Each check names the parameter it refuses.
 */
import { InvalidParameterError } from './errors.ts';
import { safeFileName } from './files.ts';
import { checkText } from './text.ts';

/** As long as a run started with `testRunName` may be (domain/run-config.ts). */
const RUN_NAME_RULE = { maxLength: 255 } as const;

export interface RunChanges {
  /** The new name; null gives the run back its default name, `Test Run {number}`. */
  readonly name?: string | null;
}

/**
 * `displayName` is what the Java client's `APITestRun.update()` sends; `name` is taken too, as the
 * run's other writes call it. An empty name is no name: the run shows its default one again.
 */
export function checkRunChanges(input: { displayName?: string; name?: string }): RunChanges {
  if (input.displayName !== undefined && input.name !== undefined && input.displayName.trim() !== input.name.trim()) {
    throw new InvalidParameterError(
      'displayName',
      "Parameters 'displayName' and 'name' both name the run and differ; send one of them",
    );
  }
  const parameter = input.displayName !== undefined ? 'displayName' : 'name';
  const raw = input.displayName ?? input.name;
  if (raw === undefined) return {};
  const name = checkText(parameter, raw, RUN_NAME_RULE);
  return { name: name === '' ? null : name };
}

/**
 * A file's new name, made safe as an upload's name is (no path, no quotes or control characters).
 * It keeps the file's extension: what the file is (an APK, an IPA, a test package) was decided on
 * upload from its name and bytes, and runs and downloads rely on the extension saying so.
 */
export function checkFileName(raw: string | undefined, current: string): string {
  if (raw === undefined) throw new InvalidParameterError('name', "Parameter 'name' is required: the file's new name");
  const trimmed = checkText('name', raw, { maxLength: 255, required: true });
  const name = safeFileName(trimmed);
  if (name !== trimmed) {
    throw new InvalidParameterError(
      'name',
      `Parameter 'name' must be a plain file name, without a path, quotes or control characters (it would be '${name}')`,
    );
  }
  const extension = extensionOf(current);
  if (extensionOf(name).toLowerCase() !== extension.toLowerCase()) {
    throw new InvalidParameterError(
      'name',
      extension === ''
        ? `Parameter 'name' must keep the file without an extension, as it was uploaded`
        : `Parameter 'name' must keep the file's extension '${extension}', as it was uploaded`,
    );
  }
  return name;
}

/** `.apk` of `app.apk`, `.gz` of `a.tar.gz`; none for `Makefile` or `.env`. */
function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot);
}
