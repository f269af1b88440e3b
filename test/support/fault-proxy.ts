import { connect, createServer, type Socket } from 'node:net';

/*
 * A TCP proxy in front of a real service (DynamoDB Local), for what a network can do to a request
 * that the service itself never does: a connection that takes a request and goes silent. Bytes pass
 * through both ways until a request matching an armed fault comes (the SDK sends one request at a
 * time on a connection); from then on that connection is cut as the fault says.
 */

/** `stall`: the request never reaches the service. `swallow`: it does, and its answer is dropped. */
export type ConnectionFault = 'stall' | 'swallow';

export interface FaultProxy {
  url: string;
  /** Connections accepted so far. */
  connections: number;
  /** Cuts the connection of the next request whose bytes contain `matching` (any request by default). */
  faultNext(fault: ConnectionFault, matching?: string): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const { hostname, port } = new URL(target);
  const armed: { fault: ConnectionFault; matching: string }[] = [];
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => {});
  };
  const proxy: FaultProxy = {
    url: '',
    connections: 0,
    faultNext: (fault, matching = '') => armed.push({ fault, matching }),
    close: () =>
      new Promise((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((client) => {
    proxy.connections++;
    const upstream = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname);
    track(client);
    track(upstream);
    let cut: ConnectionFault | undefined;
    client.on('data', (chunk) => {
      const armedAt = cut ? -1 : armed.findIndex(({ matching }) => chunk.includes(matching));
      if (armedAt >= 0) cut = armed.splice(armedAt, 1)[0]?.fault;
      if (cut !== 'stall') upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!cut) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the fault proxy has no port');
  proxy.url = `http://127.0.0.1:${address.port}`;
  return proxy;
}
