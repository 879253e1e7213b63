/**
 * A faithful-enough Appium server at the HTTP level, for the agent's relay tests: `appium server
 * --address A --port P ...` as the agent starts it, W3C answers and errors, one session at a time,
 * a log line per request on stdout. FAKE_APPIUM_FAIL=1 makes it exit at start, as a server whose
 * drivers are missing does.
 */
import http from 'node:http';

const args = process.argv.slice(2);
const option = (name) => args[args.indexOf(name) + 1];
if (process.env.FAKE_APPIUM_FAIL === '1') {
  console.log('Could not load driver uiautomator2');
  process.exit(1);
}
let session = null;
let count = 0;
const send = (response, status, value) => {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify({ value }));
};
const error = (response, status, code, message) => send(response, status, { error: code, message, stacktrace: '' });

http
  .createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      console.log(`${request.method} ${request.url}`);
      const parts = request.url.split('/').filter(Boolean);
      if (request.method === 'GET' && request.url === '/status')
        return send(response, 200, { ready: true, build: { version: '3.0.0-fake' } });
      if (request.method === 'POST' && request.url === '/session') {
        const caps = JSON.parse(body).capabilities?.alwaysMatch ?? {};
        if (!caps['appium:udid']) return error(response, 500, 'session not created', 'no udid');
        session = { id: `fake-${++count}`, caps };
        return send(response, 200, { sessionId: session.id, capabilities: caps });
      }
      if (parts[0] !== 'session' || session === null || parts[1] !== session.id)
        return error(response, 404, 'invalid session id', `no session ${parts[1]}`);
      if (request.method === 'DELETE' && parts.length === 2) {
        session = null;
        return send(response, 200, null);
      }
      if (request.method === 'GET' && parts[2] === 'source')
        return send(
          response,
          200,
          `<hierarchy udid="${session.caps['appium:udid']}" app="${session.caps['appium:app'] ?? ''}"/>`,
        );
      if (request.method === 'POST' && parts[2] === 'element')
        return error(
          response,
          404,
          'no such element',
          'An element could not be located on the page using the given search parameters.',
        );
      return error(response, 404, 'unknown command', `${request.method} ${request.url}`);
    });
  })
  .listen(Number(option('--port')), option('--address'), () =>
    console.log('Appium REST http interface listener started'),
  );
