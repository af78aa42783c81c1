import fs from 'node:fs';
import tls from 'node:tls';
import { ApplicationFailure } from '@temporalio/common';
import { parseOutboundAllow } from '../../activities/outbound-allow';
import { createOutboundDispatcher, type Resolve } from '../../activities/outbound-dispatcher';
import { callProvider } from '../../activities/provider-http';
import { INWARD_CERT_PATH, INWARD_SECRET, type InwardService, startInwardService } from '../doubles/inward-service';

/**
 * The dispatcher every provider call goes through, against an https service on loopback whose
 * certificate this process trusts: what it connects to, what it refuses, and that TLS is still
 * verified against the URL's host name while the socket goes to the checked address.
 */

let service: InwardService;
const defaultCAs = tls.getCACertificates('default');

beforeAll(async () => {
  tls.setDefaultCACertificates([...defaultCAs, fs.readFileSync(INWARD_CERT_PATH, 'utf8')]);
  service = await startInwardService();
});

afterAll(async () => {
  tls.setDefaultCACertificates(defaultCAs);
  await service.close();
});

function stubResolve(answers: string[][]): Resolve & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    return (answers[calls.length - 1] ?? answers[answers.length - 1]).map((address) => ({ address }));
  };
  return Object.assign(resolve, { calls });
}

async function call(allow: string, url: string, resolve?: Resolve) {
  const dispatcher = createOutboundDispatcher({ allow: parseOutboundAllow(allow), resolve });
  try {
    return await callProvider({ allowHttpHosts: [], timeoutMs: 2_000, dispatcher }, { method: 'GET', url, provider: 'e-signature API' });
  } finally {
    await dispatcher.close();
  }
}

async function failure(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const outcome = await promise.then(
    (value) => new Error(`expected a failure, got ${JSON.stringify(value)}`),
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(ApplicationFailure);
  return outcome as ApplicationFailure;
}

describe('createOutboundDispatcher', () => {
  it('reaches a loopback service whose host:port OUTBOUND_ALLOW lists', async () => {
    const before = service.connections;
    expect(await call(`127.0.0.1:${service.port}`, `https://127.0.0.1:${service.port}/api`)).toEqual({ status_code: 200, response: INWARD_SECRET });
    expect(service.connections).toBe(before + 1);
  });

  it('refuses the same service on a port the list does not name, before connecting', async () => {
    const before = service.connections;
    const err = await failure(call(`127.0.0.1:${service.port + 1}`, `https://127.0.0.1:${service.port}/api`));
    expect(err).toMatchObject({
      type: 'outbound_policy',
      nonRetryable: true,
      message: 'e-signature API not called: 127.0.0.1 is a non-public address (loopback) not in OUTBOUND_ALLOW',
    });
    expect(service.connections).toBe(before);
  });

  it('an allowed on-premises name: connects to the address it resolved, and verifies the certificate against the name', async () => {
    const resolve = stubResolve([['127.0.0.1']]);
    const before = service.connections;
    const ok = await call(`provider.test:${service.port}`, `https://provider.test:${service.port}/api`, resolve);
    expect(ok).toEqual({ status_code: 200, response: INWARD_SECRET });
    expect(resolve.calls).toEqual(['provider.test']);
    expect(service.connections).toBe(before + 1);
  });

  it('a name the certificate does not carry fails TLS although the address it resolved to is in the certificate', async () => {
    const resolve = stubResolve([['127.0.0.1']]);
    const before = service.connections;
    const err = await failure(call(`wrong.test:${service.port}`, `https://wrong.test:${service.port}/api`, resolve));
    expect(service.connections).toBe(before + 1);
    expect(err.type).toBe('unreachable');
    expect(err.message).toMatch(/^e-signature API unreachable/);
  });

  it('checks every address of an answer: one inward address refuses the name', async () => {
    const resolve = stubResolve([['93.184.215.14', '127.0.0.1']]);
    const before = service.connections;
    const err = await failure(call('', `https://mixed.test:${service.port}/api`, resolve));
    expect(err).toMatchObject({ type: 'outbound_policy', message: 'e-signature API not called: mixed.test resolves to a non-public address (loopback) not in OUTBOUND_ALLOW' });
    expect(service.connections).toBe(before);
  });

  it('an empty answer connects nowhere', async () => {
    const err = await failure(call('', `https://nothing.test:${service.port}/api`, stubResolve([[]])));
    expect(err).toMatchObject({ type: 'unreachable', message: expect.stringContaining('e-signature API unreachable') });
  });
});
