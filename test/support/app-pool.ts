/**
 * Apps for harnesses, kept from one test to the next of a file. Building one costs a few tenths of a
 * second of CPU (some 800 routes and their validators) and most test files built one per test.
 *
 * An app is built around a context whose every field reads the context of the harness that holds
 * the app at that moment: a test gets a fresh store, clock, blobs, notifier, limits and keys as
 * before, only the routes are not built again. A harness gives its app back when it closes; the app
 * is closed instead when it may still hold something of its test: it listened on a port, a request
 * had not finished, or it counts requests (rate limits).
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance } from 'fastify';
import { type ValidatorFactory, buildApp } from '../../src/api/app.ts';
import type { RateLimits } from '../../src/api/plugins/rate-limit.ts';
import type { Context } from '../../src/services/context.ts';

export interface AppOptions {
  readonly publicUrl?: string;
  readonly rateLimits?: RateLimits;
}

export interface LeasedApp {
  readonly app: FastifyInstance;
  /** Gives the app back for the next harness, or closes it (see above). */
  release(): Promise<void>;
}

interface Pooled {
  readonly app: FastifyInstance;
  readonly holder: { ctx: Context | undefined };
  readonly state: { inFlight: number };
}

const idle = new Map<string, Pooled[]>();
/** One for every app this worker builds: Ajv compiled each app's validators anew, 0.1 s an app. */
const validators = AjvCompiler() as ValidatorFactory;

export async function leaseApp(ctx: Context, options: AppOptions): Promise<LeasedApp> {
  // What buildApp reads once, when it builds, rather than at each request.
  const key = JSON.stringify([ctx.flavour, options.publicUrl ?? null]);
  const poolable = options.rateLimits === undefined;
  const pooled = (poolable && idle.get(key)?.pop()) || (await build(ctx, options));
  pooled.holder.ctx = ctx;
  let released = false;
  return {
    app: pooled.app,
    async release() {
      if (released) return;
      released = true;
      pooled.holder.ctx = undefined;
      if (poolable && pooled.state.inFlight === 0 && !pooled.app.server.listening) {
        const list = idle.get(key) ?? [];
        list.push(pooled);
        idle.set(key, list);
      } else {
        await pooled.app.close();
      }
    },
  };
}

async function build(ctx: Context, options: AppOptions): Promise<Pooled> {
  const holder: { ctx: Context | undefined } = { ctx };
  const state = { inFlight: 0 };
  const app = await buildApp({
    ctx: delegatingContext(holder),
    version: 'test',
    rateLimits: options.rateLimits,
    publicUrl: options.publicUrl,
    validators,
  });
  // Requests refused by an earlier hook (authentication) never reach this one: they are counted
  // out only if they were counted in.
  const open = new WeakSet<object>();
  app.addHook('onRequest', async (request) => {
    open.add(request);
    state.inFlight += 1;
  });
  app.addHook('onResponse', async (request) => {
    if (open.delete(request)) state.inFlight -= 1;
  });
  await app.ready();
  return { app, holder, state };
}

/** A context that is, field by field, the one its holder has now. */
function delegatingContext(holder: { ctx: Context | undefined }): Context {
  const current = (): Context => {
    if (holder.ctx === undefined) throw new Error('the app was used after its harness closed');
    return holder.ctx;
  };
  return new Proxy({} as Context, {
    get: (_target, property) => Reflect.get(current(), property),
    has: (_target, property) => Reflect.has(current(), property),
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor: (_target, property) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(current(), property);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}
