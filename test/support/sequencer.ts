/**
 * The order files start in: longest first, so that the run does not end on one long file while the
 * other workers sit idle (vitest hands the next file to whichever worker is free). A file's length
 * is the longer of its figure in file-durations.ts and what vitest measured in an earlier run here
 * (its cache, which a run of a few tests of the file shortens: hence the longer); the short files,
 * in vitest's own order, come after the long ones.
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { KNOWN_SECONDS } from './file-durations.ts';

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const root = this.ctx.config.root;
    const estimate = (spec: TestSpecification): number => {
      const file = path.relative(root, spec.moduleId).split(path.sep).join('/');
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      return Math.max((cached?.duration ?? 0) / 1000, KNOWN_SECONDS[file] ?? 0);
    };
    const seconds = new Map(ordered.map((spec) => [spec, estimate(spec)]));
    // Array.prototype.sort is stable: files of equal estimate keep vitest's order.
    return ordered.sort((a, b) => seconds.get(b)! - seconds.get(a)!);
  }
}
