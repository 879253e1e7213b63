/**
 * Which sandbox an agent takes, per flavour, on a host that can sandbox and on one that cannot
 * (its probe answers why, as probeBubblewrap does where user namespaces are off or bwrap is missing).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type SandboxHost, chooseSandbox } from '../../src/agent/drivers/host/sandbox-choice.ts';
import { driverFlags } from '../../src/cli/agent-process.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-sandbox-choice-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const cannot: SandboxHost = {
  bwrap: undefined,
  probe: () => 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap',
};
const can: SandboxHost = { bwrap: '/usr/bin/bwrap', probe: () => null };

function choose(flags: Record<string, string>, host: SandboxHost) {
  const warnings: string[] = [];
  const sandbox = chooseSandbox(loadConfig({ env: {}, flags }), dir, (line) => warnings.push(line), host);
  return { sandbox, warnings };
}

describe('the sandbox an agent chooses', () => {
  it('is bubblewrap where it works, without network on public and with the host network elsewhere', () => {
    expect(choose({ flavour: 'public' }, can).sandbox).toMatchObject({ kind: 'bubblewrap', network: 'none' });
    expect(choose({ flavour: 'private' }, can).sandbox).toMatchObject({ kind: 'bubblewrap', network: 'host' });
    expect(choose({ flavour: 'enterprise', sandboxNetwork: 'none' }, can).sandbox).toMatchObject({
      kind: 'bubblewrap',
      network: 'none',
    });
    expect(
      choose(
        {
          flavour: 'private',
          sandboxMemoryMb: '256',
          sandboxProcesses: '32',
          sandboxCpuSeconds: '60',
          sandboxDiskMb: '100',
        },
        can,
      ).sandbox.limits,
    ).toEqual({
      memoryMb: 256,
      processes: 32,
      cpuSeconds: 60,
      diskMb: 100,
    });
  });

  it('refuses to start on public where it cannot sandbox, in one line saying why', () => {
    expect(() => choose({ flavour: 'public' }, cannot)).toThrow(ConfigError);
    expect(() => choose({ flavour: 'public' }, cannot)).toThrow(
      /^Refusing to start on the public flavour without a sandbox: bubblewrap \(bwrap\) is not installed[^\n]*$/,
    );
    expect(() => choose({ flavour: 'public', sandbox: 'none' }, can)).toThrow(/public flavour .* --sandbox none/);
    expect(() => choose({ flavour: 'public', sandboxNetwork: 'host' }, can)).toThrow(/--sandbox-network host/);
  });

  it('warns loudly on private and enterprise, and runs unsandboxed only then or when told', () => {
    for (const flavour of ['private', 'enterprise']) {
      const { sandbox, warnings } = choose({ flavour }, cannot);
      expect(sandbox.kind).toBe('none');
      expect(warnings).toEqual([
        expect.stringMatching(
          /^WARNING: NO SANDBOX: bubblewrap \(bwrap\) is not installed.*can read the agent's token/,
        ),
      ]);
    }
    const chosen = choose({ flavour: 'private', sandbox: 'none' }, can);
    expect(chosen.sandbox.kind).toBe('none');
    expect(chosen.warnings).toEqual([expect.stringMatching(/^WARNING: --sandbox none/)]);
    expect(() => choose({ flavour: 'private', sandbox: 'bubblewrap' }, cannot)).toThrow(
      /^Refusing to start: --sandbox bubblewrap, but bubblewrap \(bwrap\) is not installed/,
    );
  });

  it("hands `local`'s agent the cloud's flavour and sandbox settings", () => {
    const flags = driverFlags(
      loadConfig({ env: {}, flags: { flavour: 'public', sandboxMemoryMb: '128', sandboxReadOnly: '/opt/sdk,/srv/x' } }),
    );
    expect(flags.join(' ')).toContain('--flavour public --sandbox auto');
    expect(flags.join(' ')).toContain('--sandbox-memory-mb 128');
    expect(flags.join(' ')).toContain('--sandbox-read-only /opt/sdk,/srv/x');
  });

  it('refuses bad sandbox settings naming them', () => {
    expect(() => loadConfig({ env: {}, flags: { sandbox: 'docker' } })).toThrow(
      "Invalid --sandbox: 'docker' must be one of auto, bubblewrap, none",
    );
    expect(() => loadConfig({ env: { DEVICECLOUD_SANDBOX_MEMORY_MB: '0' } })).toThrow(
      'Invalid --sandbox-memory-mb (from environment variable DEVICECLOUD_SANDBOX_MEMORY_MB)',
    );
    expect(() => loadConfig({ env: {}, flags: { sandboxReadOnly: 'relative/path' } })).toThrow(
      'must be absolute paths',
    );
  });
});
