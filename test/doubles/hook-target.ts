import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureRefusal, verifySignature } from '../../activities/payments-signature';

/**
 * The receiver's side of `Webhook-Signature: t=<unix>,v1=<hex>`: the same check the payments
 * ingress runs on a provider's deliveries (itself tested against the provider's own library).
 */
export function verifyWebhookSignature(secret: string, header: string | undefined, rawBody: string, toleranceSeconds = 300): boolean {
  try {
    verifySignature({ payload: rawBody, header, secrets: [secret], toleranceSeconds, nowSeconds: Math.floor(Date.now() / 1000) });
    return true;
  } catch (err) {
    if (err instanceof SignatureRefusal) return false;
    throw err;
  }
}

export interface TargetRequest {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Against the secret the test registered for the path; null when it registered none. */
  signature_valid: boolean | null;
  at: number;
}

/**
 * A loopback webhook receiver. Each path answers as the test set it (`answer(path, ...statuses)`:
 * the statuses in turn, the last one from then on; 200 by default; `'hang'` never answers) and
 * verifies signatures with the secret registered for it (`trust(path, secret)`).
 */
export async function startHookTarget(host = '127.0.0.2') {
  const requests: TargetRequest[] = [];
  const answers = new Map<string, Array<number | 'hang'>>();
  const secrets = new Map<string, string>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://target').pathname;
      const body = Buffer.concat(chunks).toString('utf8');
      const secret = secrets.get(path);
      const signature = req.headers['webhook-signature'] as string | undefined;
      requests.push({ path, method: req.method ?? '', headers: req.headers, body, signature_valid: secret === undefined ? null : verifyWebhookSignature(secret, signature, body), at: Date.now() });
      const queue = answers.get(path) ?? [200];
      const answer = queue.length > 1 ? queue.shift()! : queue[0];
      if (answer === 'hang') return void hanging.add(res);
      if (answer >= 300 && answer < 400) return void res.writeHead(answer, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      res.writeHead(answer, { 'content-type': 'application/json' }).end(JSON.stringify({ received: answer < 300 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    answer: (path: string, ...statuses: Array<number | 'hang'>) => void answers.set(path, statuses),
    trust: (path: string, secret: string) => void secrets.set(path, secret),
    to: (path: string) => requests.filter((r) => r.path === path),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export type HookTarget = Awaited<ReturnType<typeof startHookTarget>>;
