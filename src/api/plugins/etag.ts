/**
 * ETags and 304s (docs/api.md#conditional-requests): a string or Buffer answer carries a hash of
 * its bytes, and a request whose If-None-Match names it gets 304 with no body. In place of
 * @fastify/etag, whose hook hashes every answer: those of `skip` (the WebDriver hub's) are not
 * hashed. No WebDriver client sends If-None-Match, and the hash of a page source or a screenshot
 * (megabytes of base64) cost about 2 ms a MiB on the 2-core VM, per command (issue 19).
 */
import { hash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export function registerEtags(app: FastifyInstance, skip: (url: string) => boolean): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (skip(request.url)) return done(null, payload);
    let etag = reply.getHeader('etag');
    if (!etag) {
      // Streams (files, zips, logs) carry none.
      if (typeof payload !== 'string' && !(payload instanceof Buffer)) return done(null, payload);
      // SHA-1 in one call rather than a Hash object per answer: about half the time on a small answer.
      etag = `"${hash('sha1', payload, 'base64')}"`;
      reply.header('etag', etag);
    }
    const match = request.headers['if-none-match'];
    if (match === etag || match === `W/${String(etag)}` || `W/${match}` === etag) {
      reply.code(304);
      return done(null, '');
    }
    done(null, payload);
  });
}
