/**
 * Headers that keep the dashboard's origin safe. The dashboard and every user's files share one
 * origin, and a file is the user's or their test package's bytes: an XML or SVG artifact opened in
 * the browser could otherwise run script there, with the dashboard's cookie. So every answer but
 * the dashboard's own pages is sandboxed (no script, no plug-ins, not even same-origin), nothing is
 * sniffed into another type, and no page of this origin may be framed by another site.
 */
import type { FastifyInstance } from 'fastify';

/** The dashboard: its own scripts, styles and images (screenshots are API answers), nothing inline. */
const DASHBOARD_POLICY =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
/** API answers and downloads: data, never a document that does anything. */
const DATA_POLICY = "default-src 'none'; sandbox; frame-ancestors 'none'";

/** Everything that is not the dashboard's own files: the API (with every download), agents, OAuth, sign-in. */
const DATA_PATHS = /^\/(api|agent|oauth|auth)(\/|\?|$)/;

export function registerSecurityHeaders(app: FastifyInstance): void {
  // A callback rather than an async function: it runs on every request, and awaits nothing.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'same-origin');
    reply.header('content-security-policy', DATA_PATHS.test(request.url) ? DATA_POLICY : DASHBOARD_POLICY);
    done();
  });
}
