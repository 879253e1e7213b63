/** Anonymous facts about this deployment. */
import { rep } from '../present/representation.ts';
import { type RouteSpec, ok, route } from '../route.ts';

export interface DeploymentInfo {
  readonly version: string;
  readonly flavour: string;
}

export function infoRoutes(info: DeploymentInfo): readonly RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/info',
      summary: 'Version, URLs and deployment flavour (no sign-in needed)',
      tags: ['Service'],
      access: 'anonymous',
      handle: async ({ present }) =>
        ok(rep('apiInfo', { version: info.version, cloudUrl: present.baseUrl, frontendUrl: present.baseUrl, flavour: info.flavour })),
    }),
  ];
}
