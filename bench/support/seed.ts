/** Data for the benchmarks, written through the store as runs and agents would leave it. */
import type { Device } from '../../src/domain/devices.ts';
import type { DeviceRunState } from '../../src/domain/runs.ts';
import type { Context } from '../../src/services/context.ts';
import { createProject } from '../../src/services/projects.ts';
import { createUser } from '../../src/services/users.ts';
import * as fixtures from '../../test/support/fixtures.ts';

export async function seedUser(ctx: Context, name: string, plan: 'SILVER' | 'GOLD' | 'PLATINUM' = 'GOLD') {
  return createUser(ctx, {
    email: `${name}@bench.example.com`,
    password: 'bench-password-1',
    plan,
    firstName: 'Bench',
    lastName: name,
  });
}

export async function seedDevices(ctx: Context, count: number): Promise<Device[]> {
  const devices: Device[] = [];
  for (let i = 0; i < count; i++) devices.push(await fixtures.device(ctx, `Bench phone ${i + 1}`));
  return devices;
}

/** Finished runs of finished device runs, with test case counts, in projects of one user. */
export async function seedProjects(
  ctx: Context,
  options: { name: string; projects: number; runs: number; deviceRunsPerRun: number; devices?: Device[] },
) {
  const user = await seedUser(ctx, options.name);
  const devices = options.devices ?? (await seedDevices(ctx, options.deviceRunsPerRun));
  const states: DeviceRunState[] = Array.from({ length: options.deviceRunsPerRun }, (_, i) =>
    i % 5 === 4 ? 'FAILED' : 'SUCCEEDED',
  );
  const projects = [];
  for (let p = 0; p < options.projects; p++) {
    const project = await ctx.store.transaction(async (store) => {
      const scoped = { ...ctx, store };
      const { project: created } = await createProject(scoped, user, { name: `Project ${p + 1}`, type: 'ANDROID' });
      for (let r = 0; r < options.runs; r++) {
        await fixtures.run(scoped, user, created.id, devices, states, {
          name: `Run ${r + 1}`,
          testCases: { passed: 9, failed: 1 },
        });
      }
      return created;
    });
    projects.push(project);
  }
  return { user, devices, projects };
}

export async function seedProject(ctx: Context, options: { name: string; runs: number; deviceRunsPerRun: number }) {
  const { user, projects } = await seedProjects(ctx, { ...options, projects: 1 });
  return { user, project: projects[0]! };
}
