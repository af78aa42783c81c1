import net from 'node:net';

/**
 * A TCP proxy in the test process between the stack and Postgres, so the
 * database can be made unreachable without stopping the server.
 *
 * `cut()` closes the listener (new connections are refused) and destroys every
 * open connection (pool clients and the LISTEN connection see their socket die);
 * `restore()` listens again on the same port. `blackhole()` is the nastier
 * partition: connections stay open and new ones are accepted, but no byte
 * passes either way until `restore()`, when the held connections are dropped.
 */
export class TcpProxy {
  private server?: net.Server;
  private holding = false;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** Connections accepted and forwarded since start. */
  accepted = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  get up() {
    return Boolean(this.server);
  }

  async start(port = 0): Promise<void> {
    const server = net.createServer((client) => {
      this.accepted += 1;
      if (this.holding) {
        // Accepted, never answered: what a partitioned host looks like.
        this.sockets.add(client);
        client.on('close', () => this.sockets.delete(client));
        client.on('error', () => undefined);
        client.pause();
        return;
      }
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.setNoDelay(true);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port || this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
  }

  /** The database becomes unreachable: connections refused, open ones reset. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = server ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
  }

  /** Partition: every open connection stops passing bytes, new ones are accepted and never answered. */
  blackhole(): void {
    this.holding = true;
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
  }

  /** Listens again on the same port (after a cut) or lets bytes pass again (after a blackhole: held connections are reset). */
  async restore(): Promise<void> {
    if (this.holding) {
      this.holding = false;
      for (const s of this.sockets) s.destroy();
      this.sockets.clear();
    }
    if (this.server) return;
    // The port was ours a moment ago; retry briefly in case the kernel has not released it.
    for (let i = 0; ; i++) {
      try {
        await this.start(this.port);
        return;
      } catch (err) {
        if (i >= 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
