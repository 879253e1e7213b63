/**
 * A load balancer without affinity in front of several servers: each HTTP request goes to the next
 * server in turn, whatever connection it came on (an agent's keep-alive connection does not pin
 * it to one server). For the tests of what a cloud behind such a balancer must survive.
 */
import http from 'node:http';

export interface RoundRobinProxy {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** How many requests each server got, in the order of `targets`. */
  counts(): number[];
  close(): Promise<void>;
}

export async function roundRobinProxy(targets: readonly URL[]): Promise<RoundRobinProxy> {
  const counts = targets.map(() => 0);
  const upstream = new http.Agent({ keepAlive: true });
  let next = 0;
  const server = http.createServer((inbound, outbound) => {
    const index = next;
    next = (next + 1) % targets.length;
    counts[index]! += 1;
    const target = targets[index]!;
    const forwarded = http.request(
      {
        agent: upstream,
        host: target.hostname,
        port: target.port,
        method: inbound.method,
        path: inbound.url,
        headers: { ...inbound.headers, host: target.host },
      },
      (answer) => {
        outbound.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outbound);
      },
    );
    forwarded.on('error', () => {
      if (!outbound.headersSent) outbound.writeHead(502);
      outbound.end();
    });
    inbound.on('aborted', () => forwarded.destroy());
    inbound.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => [...counts],
    close: async () => {
      server.closeAllConnections();
      upstream.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
