/**
 * Runs INSIDE a sandbox without network (plain JavaScript, started by the agent's own Node binary,
 * bound read-only): the run's script's parent, which gives it TCP on its own loopback where the
 * run's ADB endpoint is only a unix socket in its folder. It is not a way out: every byte it
 * carries goes through the endpoint's socket, whose policy (adb-policy.ts) applies as to any client.
 *
 *   node sandbox-relay.mjs <adb socket> <control socket> <adb port> -- <command…>
 *
 * - 127.0.0.1:<adb port> (5037, adb's default): each connection is piped to <adb socket>, for tools
 *   that only speak TCP to the ADB server (Appium's `adb -P`, adbkit).
 * - <control socket>: the endpoint asks for forwards there (`{"id","listen","remote"}` and
 *   `{"id","close"}`, one JSON object a line) when the script asks it for `forward:tcp:<port>;…`;
 *   the relay listens on 127.0.0.1:<port> and answers once it does, so that the script's
 *   `adb forward` returns when the port is reachable. Each connection to it becomes
 *   `host:transport-any` + `<remote>` (a device service) on <adb socket>.
 * - <command> runs as its child with the same stdio; the relay ends with it, with its exit code
 *   (or signal). SIGTERM is the script's to handle: the relay waits for the script to end.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';

const MAX_LINE = 64 * 1024;
const separator = process.argv.indexOf('--', 2);
const [adbSocket, controlSocket, adbPort] = process.argv.slice(2, separator);
const command = process.argv.slice(separator + 1);
if (
  separator < 0 ||
  command.length === 0 ||
  adbSocket === undefined ||
  controlSocket === undefined ||
  adbPort === undefined
) {
  process.stderr.write('usage: sandbox-relay.mjs <adb socket> <control socket> <adb port> -- <command…>\n');
  process.exit(2);
}

const say = (message) => process.stderr.write(`[devicecloud relay] ${message}\n`);
/** Forward listeners by local port. */
const forwards = new Map();

function quiet(socket) {
  socket.on('error', () => undefined);
  return socket;
}

function hex(text) {
  const body = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from(body.length.toString(16).padStart(4, '0'), 'ascii'), body]);
}

function pipeBoth(a, b) {
  a.pipe(b);
  b.pipe(a);
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server.address().port);
    });
  });
}

/** A connection to a forward: the device service `remote` on the run's phone, through the endpoint. */
function forwardConnection(client, remote) {
  quiet(client).pause();
  const upstream = quiet(net.connect(adbSocket));
  const requests = [hex('host:transport-any'), hex(remote)];
  upstream.write(requests.shift());
  let buffered = Buffer.alloc(0);
  const onData = (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4) {
      if (buffered.subarray(0, 4).toString('latin1') !== 'OKAY') {
        upstream.destroy();
        client.destroy();
        return;
      }
      buffered = buffered.subarray(4);
      const next = requests.shift();
      if (next !== undefined) {
        upstream.write(next);
        continue;
      }
      upstream.off('data', onData);
      if (buffered.length > 0) client.write(buffered);
      pipeBoth(client, upstream);
      client.resume();
      return;
    }
  };
  upstream.on('data', onData);
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
}

async function openForward(port, remote) {
  const existing = forwards.get(port);
  if (existing !== undefined) {
    existing.remote = remote;
    return port;
  }
  const entry = { remote, server: null };
  entry.server = net.createServer((client) => forwardConnection(client, entry.remote));
  const bound = await listen(entry.server, port);
  forwards.set(bound, entry);
  return bound;
}

function closeForward(port) {
  forwards.get(port)?.server.close();
  forwards.delete(port);
}

function control() {
  const socket = quiet(net.connect(controlSocket));
  socket.on('error', (error) =>
    say(`no forwards in this run: the endpoint's control socket cannot be reached (${error.message})`),
  );
  let pending = '';
  socket.on('data', (chunk) => {
    pending += chunk.toString('utf8');
    if (pending.length > MAX_LINE) return socket.destroy();
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      const reply = (answer) => socket.write(`${JSON.stringify({ id: message.id, ...answer })}\n`);
      if (Number.isInteger(message.listen) && typeof message.remote === 'string') {
        openForward(message.listen, message.remote).then(
          (port) => reply({ port }),
          (error) => reply({ error: error.message }),
        );
      } else if (Number.isInteger(message.close)) {
        closeForward(message.close);
        reply({});
      }
    }
  });
  return new Promise((resolve) => {
    socket.once('connect', resolve);
    socket.once('error', resolve);
  });
}

const adbServer = net.createServer((client) => {
  quiet(client);
  const upstream = quiet(net.connect(adbSocket));
  pipeBoth(client, upstream);
});
try {
  await listen(adbServer, Number(adbPort));
} catch (error) {
  say(`the ADB server's port ${adbPort} is not offered on the loopback: ${error.message}`);
}
await control();

// The script's TERM is the script's: the relay ends when it does.
process.on('SIGTERM', () => undefined);
const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
child.on('error', (error) => {
  say(`could not start ${command[0]}: ${error.message}`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  if (signal !== null) {
    process.removeAllListeners('SIGTERM');
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
});
