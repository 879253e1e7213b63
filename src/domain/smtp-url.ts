/** The SMTP server setting (`--smtp-url`, docs/api.md#notifications), checked at start and when sending. */

/** Parses `smtp://[user:password@]host[:port][?starttls=required|never]` or `smtps://…`; throws saying what is wrong. */
export function parseSmtpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('must be an smtp:// or smtps:// URL, e.g. smtp://mail.example.com:587');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new Error('must be an smtp:// or smtps:// URL, e.g. smtp://mail.example.com:587');
  if (url.hostname === '') throw new Error('must name the SMTP server, e.g. smtp://mail.example.com:587');
  const startTls = url.searchParams.get('starttls');
  if (startTls !== null && startTls !== 'required' && startTls !== 'never')
    throw new Error(`starttls must be 'required' or 'never' (by default it is used when the server offers it)`);
  return url;
}
