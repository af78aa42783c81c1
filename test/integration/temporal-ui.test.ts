import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Browser } from 'playwright-core';
import { uniqueId } from '../support/api';
import { describeInChromium, launchChromium } from '../support/browser-auth';
import { ExtraApi } from '../support/extra-api';
import { freePort, reservePort, waitFor } from '../support/ports';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal-server';

/**
 * What `make up` gives a newcomer: the dev server's Temporal UI, its codec endpoint the
 * API in TEMPORAL_CODEC_AUTH=loopback, shows a run's input decoded in a real browser.
 * No worker is needed: the input is in the run's first event, as the API's client sent it.
 */
jest.setTimeout(120_000);

describeInChromium('the Temporal UI of the dev server (headless Chromium)', () => {
  let temporal: TemporalDevServer;
  let extra: ExtraApi;
  let browser: Browser;
  let uiUrl: string;
  let token: string;

  beforeAll(async () => {
    // Held until the API starts: a port only picked was once taken while the dev server started.
    const apiPort = await reservePort();
    const uiPort = await freePort();
    uiUrl = `http://127.0.0.1:${uiPort}`;
    const logFile = path.join(process.env.TEST_WORK_DIR!, 'temporal-ui.log');
    temporal = await startTemporalDevServer(logFile, { uiPort, codecEndpoint: `http://127.0.0.1:${apiPort.port}/api/temporal-codec` });
    extra = new ExtraApi({ TEMPORAL_ADDRESS: temporal.address, PORT: String(apiPort.port), TEMPORAL_CODEC_AUTH: 'loopback', TEMPORAL_UI_ORIGINS: uiUrl });
    await apiPort.release();
    await extra.start();
    token = JSON.parse(extra.cli(['org', 'create', uniqueId('ui'), '--json'])).token;
    await waitFor('the Temporal UI', async () => ((await fetch(uiUrl)).ok ? true : undefined), 30_000);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await extra?.stop();
    await temporal?.stop();
  });

  it("shows a run's input decoded on the run's page", async () => {
    const marker = uniqueId('decoded-in-the-ui');
    const res = await fetch(`${extra.url}/api/workflows/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        workflow_type: 'esign.resources.get-resource-information',
        initial_data: { base_url: `https://${marker}.example/api` },
      }),
    });
    expect(res.status).toBe(201);
    const { workflow_id: workflowId } = (await res.json()) as { workflow_id: string };
    const connection = await Connection.connect({ address: temporal.address });
    const { workflowExecutionInfo } = await connection.workflowService.describeWorkflowExecution({
      namespace: 'default',
      execution: { workflowId },
    });
    await connection.close();
    const runId = workflowExecutionInfo!.execution!.runId!;

    const page = await browser.newPage();
    const codecCalls: number[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/api/temporal-codec/decode')) codecCalls.push(r.status());
    });
    await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}/${runId}/history`);
    // The input as the UI renders it once decoded: the workflow's own fields, in clear.
    const shown = await waitFor(
      'the decoded input on the page',
      async () => {
        const text = await page.locator('body').innerText();
        return text.includes(marker) ? text : undefined;
      },
      60_000,
      500,
    );
    expect(shown).toContain(workflowId);
    expect(shown).toContain(marker);
    expect(shown).not.toContain('binary/encrypted');
    expect(codecCalls.length).toBeGreaterThan(0);
    expect(codecCalls.every((status) => status === 200)).toBe(true);
  });
});
