/**
 * A TCP forwarder in front of a server, for one side of the network to lose it: `cut` ends every
 * connection through it and refuses new ones, while others still reach the server directly (a
 * device host that lost its route to one server of a cloud, whose clients did not).
 */
import net from 'node:net';

export interface TcpProxy {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** How many connections went through it so far. */
  connections(): number;
  cut(): Promise<void>;
}

export async function tcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  const server = net.createServer((inbound) => {
    count += 1;
    const outbound = net.connect(Number(target.port), target.hostname);
    for (const [socket, other] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        other.destroy();
      });
      socket.on('error', () => other.destroy());
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => count,
    cut: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
