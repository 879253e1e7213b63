import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The layer rules live in .oxlintrc.json and `npm test` lints the tree with them; this plays a
// newcomer who crosses a layer, so that a rule quietly lost from the config fails here.
const ROOT = resolve(import.meta.dirname, '../..');
const OXLINT = join(ROOT, 'node_modules/.bin/oxlint');

interface Probe {
  file: string;
  source: string;
}

const crossings: Probe[] = [
  { file: 'src/domain/a.ts', source: "import { openStore } from '../store/db.ts';" },
  { file: 'src/domain/b.ts', source: "import { readFileSync } from 'node:fs';" },
  { file: 'src/domain/c.ts', source: "import { Kysely } from 'kysely';" },
  { file: 'src/api/routes/a.ts', source: "import type { Row } from '../../store/runs.ts';" },
  { file: 'src/api/routes/b.ts', source: "import { reaper } from '../../jobs/reaper.ts';" },
  { file: 'src/services/a.ts', source: "import { reaper } from '../jobs/reaper.ts';" },
  { file: 'src/services/b.ts', source: "import { app } from '../api/app.ts';" },
  { file: 'src/store/a.ts', source: "import { startRun } from '../services/start-run.ts';" },
  { file: 'src/agent/drivers/a.ts', source: "import { startRun } from '../../services/start-run.ts';" },
  { file: 'src/agent/b.ts', source: "import { loadConfig } from '../config.ts';" },
  { file: 'src/config.ts', source: "import { openStore } from './store/db.ts';" },
  { file: 'src/protocol/a.ts', source: "import { app } from '../api/app.ts';" },
  { file: 'src/client/a.ts', source: "import { startRun } from '../services/start-run.ts';" },
];

const allowed: Probe[] = [
  { file: 'src/domain/ok.ts', source: "import { runStates } from './runs.ts';" },
  { file: 'src/api/routes/ok.ts', source: "import { startRun } from '../../services/start-run.ts';" },
  { file: 'src/services/ok.ts', source: "import { runs } from '../store/runs.ts';" },
  { file: 'src/jobs/ok.ts', source: "import { startRun } from '../services/start-run.ts';" },
  { file: 'src/agent/ok.ts', source: "import { agentConfig } from '../config-agent.ts';" },
  { file: 'src/cli/ok.ts', source: "import { openStore } from '../store/db.ts';" },
];

const work = mkdtempSync(join(tmpdir(), 'layer-rules-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function lint(probes: Probe[]): Promise<Set<string>> {
  const dir = mkdtempSync(join(work, 'tree-'));
  cpSync(join(ROOT, '.oxlintrc.json'), join(dir, '.oxlintrc.json'));
  for (const probe of probes) {
    mkdirSync(dirname(join(dir, probe.file)), { recursive: true });
    writeFileSync(join(dir, probe.file), `${probe.source}\nexport {};\n`);
  }
  const { stdout } = await promisify(execFile)(
    OXLINT,
    ['-c', '.oxlintrc.json', '-A', 'all', '-D', 'no-restricted-imports', '--format', 'json', 'src'],
    { cwd: dir },
  ).catch((failure: { stdout: string }) => failure);
  const report = JSON.parse(stdout) as { diagnostics: { filename: string; code: string }[] };
  return new Set(report.diagnostics.filter((d) => d.code.includes('no-restricted-imports')).map((d) => d.filename));
}

describe('layer rules', () => {
  it('refuse every import that crosses a layer the wrong way', async () => {
    const flagged = await lint(crossings);
    expect(crossings.map((p) => p.file).filter((file) => !flagged.has(file))).toEqual([]);
  });

  it('let the allowed directions through', async () => {
    expect([...(await lint(allowed))]).toEqual([]);
  });
});
