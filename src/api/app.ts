/**
 * Builds the HTTP application without listening, so tests drive it with `inject()` and the server
 * role adds `listen()`. Plug-ins load in a fixed order: body parsers, OpenAPI, authentication,
 * error rendering, then the route table.
 */
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import cookie from '@fastify/cookie';
import { AccessLog } from './access-log.ts';
import { registerDashboardModules } from './dashboard-modules.ts';
import { registerWebSession } from './web-session.ts';
import { registerOAuth } from './oauth.ts';
import swagger from '@fastify/swagger';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import secureJson from 'secure-json-parse';
import type { Context } from '../services/context.ts';
import { registerAgentProtocol } from './agent/routes.ts';
import { registerWebDriverSocket } from './agent/webdriver-socket.ts';
import { HUB_PREFIX, registerWebDriverHub } from './webdriver.ts';
import { webDriverChannels } from '../services/webdriver-channels.ts';
import { registerAuth } from './plugins/auth.ts';
import { registerEtags } from './plugins/etag.ts';
import { frameworkErrors, registerErrorHandling } from './plugins/errors.ts';
import { registerPasswordGuesses } from './plugins/password-guesses.ts';
import { type RateLimits, registerRateLimits } from './plugins/rate-limit.ts';
import { registerSecurityHeaders } from './plugins/security-headers.ts';
import type { RouteSpec } from './route.ts';
import { registerRoutes } from './routes-register.ts';
import { ROUTER_OPTIONS, knownPaths } from './known-paths.ts';
import { accountRoutes } from './routes/account.ts';
import { adminRoutes } from './routes/admin.ts';
import { propertyRoutes } from './routes/properties.ts';
import { deviceRoutes } from './routes/devices.ts';
import { labelRoutes } from './routes/labels.ts';
import { fileRoutes } from './routes/files.ts';
import { deviceScreenRoutes } from './routes/device-screens.ts';
import { flakyTestRoutes } from './routes/flaky-tests.ts';
import { frameworkRoutes } from './routes/frameworks.ts';
import { infoRoutes } from './routes/info.ts';
import { interactiveRoutes } from './routes/interactive.ts';
import { projectConfigRoutes } from './routes/project-config.ts';
import { projectRoutes } from './routes/projects.ts';
import { resultRoutes } from './routes/results.ts';
import { resultZipRoutes } from './routes/result-zips.ts';
import { recorderRoutes } from './routes/recorder.ts';
import { renameRoutes } from './routes/renames.ts';
import { runControlRoutes } from './routes/run-control.ts';
import { runProgressRoutes } from './routes/run-progress.ts';
import { runStartRoutes } from './routes/run-start.ts';
import { runRoutes } from './routes/runs.ts';
import { sharingRoutes } from './routes/sharing.ts';
import { userRoutes } from './routes/users.ts';

export interface AppOptions {
  readonly ctx: Context;
  readonly version: string;
  /** Public base URL for links; when absent, links follow the request's Host. */
  readonly publicUrl?: string;
  /** Limit of form and JSON bodies, bytes. */
  readonly bodyLimit?: number;
  /** A pino logger; none in tests. */
  readonly logger?: FastifyBaseLogger;
  /** Trust X-Forwarded-* from a load balancer in front. */
  readonly trustProxy?: boolean;
  /** None in tests unless they test them; the server role passes the configured ones. */
  readonly rateLimits?: RateLimits;
  /**
   * Compiles the routes' input validators; Fastify's own when absent. The tests build hundreds of
   * apps in one process and share one, which keeps what it compiled (by schema object).
   */
  readonly validators?: ValidatorFactory;
}

export type ValidatorFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
>;

const WEB_ROOT = path.join(import.meta.dirname, '..', 'web');

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new AccessLog(),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: options.trustProxy ?? false,
    routerOptions: { ...ROUTER_OPTIONS },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false } },
    frameworkErrors,
    ...(options.validators !== undefined && {
      schemaController: { compilersFactory: { buildValidator: options.validators } },
    }),
  }) as unknown as FastifyInstance;

  await app.register(formbody);
  await app.register(cookie);
  // Clients poll a run's status every few seconds: an answer that did not change is a 304 with no
  // body (docs/api.md#conditional-requests). Not the WebDriver hub's answers (plugins/etag.ts).
  registerEtags(app, (url) => url.startsWith(HUB_PREFIX));
  // Files are read part by part in the upload handlers; limits are set per request there.
  await app.register(multipart);
  registerJsonParser(app);
  await app.register(swagger, {
    openapi: {
      // 3.1: its schemas are JSON Schema, so a field that may be null is `type: [..., "null"]`.
      openapi: '3.1.0',
      info: {
        title: 'devicecloud API',
        version: options.version,
        description:
          'The device-cloud API. Every path also answers under /api (besides /api/v2), and /me/... also as /users/{yourId}/.... ' +
          'Answers are XML unless the request sends Accept: application/json.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'basic', description: 'API key as user name, empty password' },
        },
      },
    },
  });
  // Operators' routes are not the established API's: kept out of its table (and of what the
  // isolation tests enumerate, since a non-operator gets 403 there rather than 404).
  const specs = [...routeTable({ version: options.version, flavour: options.ctx.flavour }), ...adminRoutes];
  const known = knownPaths(specs);
  registerSecurityHeaders(app);
  const agentTokens = registerAuth(app, options.ctx, known);
  registerErrorHandling(app, options.ctx, known);
  if (options.rateLimits !== undefined) await registerRateLimits(app, options.rateLimits, known);
  registerPasswordGuesses(app, options.ctx);

  registerRoutes(app, specs, known, { ctx: options.ctx, publicUrl: options.publicUrl });
  // The hub hands commands to agents polling this server in memory (services/webdriver-channels.ts).
  const channels = webDriverChannels(options.ctx, {
    writeLog: (rows) => options.ctx.store.webDriver.insertAnswered(rows),
  });
  app.addHook('onClose', async () => channels.close());
  registerAgentProtocol(app, options.ctx, channels);
  registerWebDriverSocket(app, options.ctx, channels, agentTokens);
  registerOAuth(app, options.ctx);
  registerWebDriverHub(app, options.ctx, channels);
  registerWebSession(app, options.ctx, options.publicUrl);
  // The dashboard: static files, public (its data comes from the API with the session cookie). Its
  // type checker's files (tsconfig.json, *.d.ts) are the build's, not the browser's.
  await app.register(fastifyStatic, {
    root: WEB_ROOT,
    wildcard: false,
    index: 'index.html',
    schemaHide: true,
    globIgnore: ['**/*.json', '**/*.d.ts'],
  });
  registerDashboardModules(app);

  // The document (about a megabyte, every answer's schema written out) is the same until the app closes.
  let document: string | undefined;
  for (const url of ['/api/v2/openapi.json', '/api/openapi.json']) {
    app.get(url, { schema: { hide: true }, config: { access: 'anonymous' } }, async (_request, reply) =>
      reply.type('application/json; charset=utf-8').send((document ??= JSON.stringify(app.swagger()))),
    );
  }
  return app;
}

/** Every route of the public API, in its canonical `/me` form (tests enumerate it too). */
export function routeTable(info: { version: string; flavour: string }): RouteSpec[] {
  return [
    ...userRoutes,
    ...renameRoutes,
    ...projectRoutes,
    ...runRoutes,
    ...projectConfigRoutes,
    ...deviceRoutes,
    ...labelRoutes,
    ...fileRoutes,
    ...frameworkRoutes,
    ...runStartRoutes,
    ...runProgressRoutes,
    ...runControlRoutes,
    ...interactiveRoutes,
    ...deviceScreenRoutes,
    ...resultRoutes,
    ...flakyTestRoutes,
    ...resultZipRoutes,
    ...accountRoutes,
    ...propertyRoutes,
    ...recorderRoutes,
    ...sharingRoutes,
    ...infoRoutes({ version: info.version, flavour: info.flavour }),
  ];
}

/**
 * JSON bodies, tolerating an empty one: clients post `Content-Type: application/json` with no body
 * to action endpoints (abort, retry). Prototype poisoning is refused as Fastify's own parser does.
 */
function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      done(
        Object.assign(new Error(`The request body is not valid JSON: ${(error as Error).message}`), {
          statusCode: 400,
        }),
        undefined,
      );
    }
  });
}
