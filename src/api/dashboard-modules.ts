/**
 * Modules the dashboard imports that the server writes from the domain, so that the browser's
 * code keeps no copy of the domain's rules. `/final-states.js`: the device-session states after
 * which nothing changes any more (a page stops polling then). Typed for the dashboard's checker by
 * src/web/final-states.d.ts. Like the dashboard's files, no sign-in and no rate limit.
 */
import type { FastifyInstance } from 'fastify';
import { FINAL_DEVICE_RUN_STATES } from '../domain/runs.ts';

export const FINAL_STATES_PATH = '/final-states.js';

export function finalStatesModule(): string {
  const states = JSON.stringify([...FINAL_DEVICE_RUN_STATES]);
  return `// Written by the server from src/domain/runs.ts.\nexport const FINAL_DEVICE_SESSION_STATES = Object.freeze(${states});\n`;
}

export function registerDashboardModules(app: FastifyInstance): void {
  const body = finalStatesModule();
  app.get(FINAL_STATES_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(body),
  );
}
