// The public JSON API, called with the session cookie. Every change carries the session's CSRF
// token: another site can make the browser send the cookie, never this header.
/** @import { ApiFile } from '../client/api-types.ts' */

/** @type {{ csrf: string | null }} */
const session = { csrf: null };

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status, 0 when no answer came
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** @param {string | null} token */
export function setCsrfToken(token) {
  session.csrf = token;
}

/**
 * @param {string} method
 * @param {Record<string, string>} [extra]
 */
function headersFor(method, extra = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', ...extra };
  if (method !== 'GET' && session.csrf) headers['x-csrf-token'] = session.csrf;
  return headers;
}

/** @param {Response} response */
async function failure(response) {
  const data = await response.json().catch(() => null);
  return new ApiError(
    response.status,
    data?.message ?? data?.error_description ?? `The server answered ${response.status}`,
  );
}

/**
 * A JSON call; `body` is sent as JSON. Answers the parsed body, or null for 204. What the body is,
 * the caller declares (`@type` on what it assigns the answer to), from src/client/api-types.ts.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  const headers = headersFor(method, body === undefined ? {} : { 'content-type': 'application/json' });
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  return response.json();
}

/**
 * A call that answers bytes (a screenshot taken now), as a Blob.
 * @param {string} method
 * @param {string} path
 * @returns {Promise<Blob>}
 */
export async function apiBlob(method, path) {
  const response = await fetch(path, { method, headers: headersFor(method), credentials: 'same-origin' });
  if (!response.ok) throw await failure(response);
  return response.blob();
}

/**
 * A text resource (logs).
 * @param {string} path
 * @returns {Promise<string>}
 */
export async function apiText(path) {
  const response = await fetch(path, { headers: { accept: 'text/plain' }, credentials: 'same-origin' });
  if (!response.ok) throw await failure(response);
  return response.text();
}

/**
 * Uploads one file to /api/me/files. XMLHttpRequest rather than fetch because only it reports
 * upload progress, which matters for app binaries of a few hundred megabytes.
 * @param {File} file
 * @param {(fraction: number) => void} [onProgress]
 * @returns {Promise<ApiFile>}
 */
export function uploadFile(file, onProgress = () => undefined) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', '/api/me/files');
    for (const [name, value] of Object.entries(headersFor('POST'))) request.setRequestHeader(name, value);
    request.responseType = 'json';
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    request.addEventListener('load', () => {
      if (request.status >= 200 && request.status < 300) resolve(request.response);
      else
        reject(
          new ApiError(
            request.status,
            request.response?.message ?? `The upload of ${file.name} failed (${request.status})`,
          ),
        );
    });
    request.addEventListener('error', () => reject(new ApiError(0, `The upload of ${file.name} was interrupted`)));
    const form = new FormData();
    form.append('file', file, file.name);
    request.send(form);
  });
}
