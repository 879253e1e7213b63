/**
 * Stored files answer HTTP Range requests (docs/api.md#files): a video's seek bar and resuming
 * downloaders ask for parts. Streamed zips, written as they are sent, do not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { file } from '../support/fixtures.ts';
import { createHarness, type Harness, type TestUser } from '../support/harness.ts';

describe('ranged downloads of stored files', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let url: string;
  const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

  beforeAll(async () => {
    h = await createHarness('sqlite');
    owner = await h.user();
    other = await h.user();
    const stored = await file(h.ctx, owner.user, { name: 'data.bin', inputType: 'DATA', bytes });
    url = `/api/me/files/${stored.id}/file`;
  });
  afterAll(() => h.close());

  const get = async (range?: string, more: Record<string, string> = {}) => {
    const answer = await h.app.inject({
      method: 'GET',
      url,
      headers: {
        authorization: `Basic ${Buffer.from(`${owner.key}:`).toString('base64')}`,
        ...(range !== undefined && { range }),
        ...more,
      },
    });
    return { status: answer.statusCode, headers: answer.headers, bytes: answer.rawPayload };
  };

  it('answers the whole file with Accept-Ranges when no range is asked', async () => {
    const answer = await get();
    expect(answer.status).toBe(200);
    expect(answer.headers['accept-ranges']).toBe('bytes');
    expect(answer.headers['content-length']).toBe('1000');
    expect(answer.bytes).toEqual(bytes);
  });

  it.each([
    ['bytes=0-9', 0, 9],
    ['bytes=990-', 990, 999],
    ['bytes=-5', 995, 999],
    ['bytes=500-5000', 500, 999],
    ['bytes=-5000', 0, 999],
  ])('answers %s with 206 and exactly those bytes', async (range, start, end) => {
    const answer = await get(range);
    expect(answer.status).toBe(206);
    expect(answer.headers['content-range']).toBe(`bytes ${start}-${end}/1000`);
    expect(answer.headers['content-length']).toBe(String(end - start + 1));
    expect(answer.bytes).toEqual(bytes.subarray(start, end + 1));
  });

  it.each(['bytes=1000-', 'bytes=5000-6000', 'bytes=-0'])(
    'answers %s, beyond the end, with 416 in the negotiated format',
    async (range) => {
      const answer = await get(range, { accept: 'application/json' });
      expect(answer.status).toBe(416);
      expect(answer.headers['content-range']).toBe('bytes */1000');
      expect(JSON.parse(answer.bytes.toString())).toEqual({
        statusCode: 416,
        message: 'The range asked for starts beyond the end of the file (1000 bytes)',
      });
      const xml = await get(range);
      expect(xml.status).toBe(416);
      expect(xml.bytes.toString()).toContain('<apiExceptionMessage>');
    },
  );

  it.each(['bytes=0-1,5-6', 'items=0-4', 'bytes=9-2', 'bytes=x-y'])(
    'answers %s, which it does not serve as a part, with the whole file',
    async (range) => {
      const answer = await get(range);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-length']).toBe('1000');
    },
  );

  it('answers the whole file to If-Range, having no validator to compare', async () => {
    expect((await get('bytes=0-9', { 'if-range': '"abc"' })).status).toBe(200);
  });

  it("answers a range of another user's file as any request for it: 404", async () => {
    const answer = await other.call('GET', url, { headers: { range: 'bytes=0-9' } });
    expect(answer.status).toBe(404);
  });
});
