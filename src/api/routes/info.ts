/** Anonymous facts about this deployment. */
import Type from 'typebox';
import { entity, entitySchema } from '../present/representation.ts';
import { type RouteSpec, ok, route } from '../route.ts';

export interface DeploymentInfo {
  readonly version: string;
  readonly flavour: string;
}

const ApiInfo = entitySchema('apiInfo', {
  version: Type.String(),
  cloudUrl: Type.String({ description: 'Base URL of the API' }),
  frontendUrl: Type.String({ description: 'Base URL of the dashboard' }),
  flavour: Type.String({ description: 'private or public' }),
});

export function infoRoutes(info: DeploymentInfo): readonly RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/info',
      summary: 'Version, URLs and deployment flavour (no sign-in needed)',
      tags: ['Service'],
      answers: { 200: ApiInfo },
      access: 'anonymous',
      handle: async ({ present }) =>
        ok(
          entity(ApiInfo, {
            version: info.version,
            cloudUrl: present.baseUrl,
            frontendUrl: present.baseUrl,
            flavour: info.flavour,
          }),
        ),
    }),
  ];
}
