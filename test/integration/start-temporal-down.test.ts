import { Client, Connection } from '@temporalio/client';
import { TcpProxy } from '../chaos/support/tcp-proxy';
import { stackEnv, uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';

jest.setTimeout(180_000);

const TYPE = 'esign.resources.get-resource-information';

// An API whose Temporal is reached through a proxy in this process: cut, Temporal does not answer.
describe('POST /start repeated with its Idempotency-Key after a 503 temporal_unavailable', () => {
  let proxy: TcpProxy;
  let extra: ExtraApi;
  let connection: Connection;
  const started: string[] = [];

  beforeAll(async () => {
    const [host, port] = stackEnv.temporalAddress.split(':');
    proxy = new TcpProxy(host, Number(port));
    await proxy.start();
    extra = new ExtraApi({ TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` });
    await extra.start();
    connection = await Connection.connect({ address: stackEnv.temporalAddress });
  });
  afterAll(async () => {
    // Its payloads are sealed under the extra API's key, which the stack's worker may not hold: nothing is left to retry.
    for (const id of started) await new Client({ connection }).workflow.getHandle(id).terminate('test cleanup').catch(() => undefined);
    await connection?.close();
    await extra?.stop();
    await proxy?.close();
  });

  it('starts the run without calling it replayed; only a start that returns that run is', async () => {
    const { token } = JSON.parse(extra.cli(['org', 'create', uniqueId('temporal-down'), '--json'])) as { token: string };
    const key = uniqueId('key');
    const start = () =>
      fetch(`${extra.url}/api/workflows/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ workflow_type: TYPE, initial_data: { base_url: 'https://esign.invalid/api' } }),
        signal: AbortSignal.timeout(60_000),
      });

    await proxy.cut();
    const refused = await start();
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('temporal_unavailable');

    await proxy.restore();
    // The client reconnects on its own schedule: repeats meanwhile are refused like the first.
    let repeated = await start();
    for (const deadline = Date.now() + 60_000; repeated.status === 503 && Date.now() < deadline; repeated = await start()) {
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(repeated.status).toBe(201);
    const { workflow_id } = (await repeated.json()) as { workflow_id: string };
    started.push(workflow_id);
    expect(repeated.headers.get('idempotent-replayed')).toBeNull();

    const again = await start();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as { workflow_id: string }).workflow_id).toBe(workflow_id);
  });
});
