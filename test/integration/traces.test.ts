import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { projectRoot } from '../../db/client';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { outboundAllowFor } from '../support/outbound';
import { waitFor } from '../support/ports';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal-server';

/**
 * OpenTelemetry: an API + worker with OTEL_EXPORTER_OTLP_ENDPOINT exports to an OTLP/HTTP
 * collector on loopback (spans kept in memory here); one run is one trace from the
 * POST /start request through the client, workflow and activities to the provider call.
 * A Temporal server of its own, so its worker takes no task of the shared stack.
 */
jest.setTimeout(120_000);

const TYPE = 'esign.resources.get-resource-information';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: OtlpValue }>;
}
interface OtlpExport {
  resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : String(value.intValue));
};

describe('traces (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  let collector: http.Server;
  let temporal: TemporalDevServer;
  let extra: ExtraApi;
  let token: string;
  let organization: string;

  beforeAll(async () => {
    collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) {
          bodies.push(body);
          const parsed = JSON.parse(body) as OtlpExport;
          for (const r of parsed.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
        }
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    temporal = await startTemporalDevServer(path.join(process.env.TEST_WORK_DIR!, 'temporal-traces.log'));
    const esignUrl = process.env.TEST_ESIGN_URL!;
    extra = new ExtraApi(
      {
        TEMPORAL_ADDRESS: temporal.address,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
        OTEL_BSP_SCHEDULE_DELAY: '200',
        ALLOW_HTTP_HOSTS: new URL(esignUrl).hostname,
        OUTBOUND_ALLOW: outboundAllowFor(esignUrl),
        WORKFLOW_BUNDLE_PATH: path.join(projectRoot(), 'dist', 'workflow-bundle.js'),
      },
      'all',
    );
    await extra.start();
    const created = JSON.parse(extra.cli(['org', 'create', uniqueId('traces'), '--json']));
    token = created.token;
    organization = created.organization_uuid;
  });
  afterAll(async () => {
    await extra?.stop();
    await temporal?.stop();
    await new Promise((r) => collector?.close(r));
  });

  it('exports one trace from POST /start through workflow and activities to the provider call', async () => {
    const call = (p: string, body?: unknown) =>
      fetch(`${extra.url}${p}`, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
    const res = await call('/api/workflows/start', { workflow_type: TYPE, initial_data: { base_url: process.env.TEST_ESIGN_URL, api_token: ESIGN_VALID_TOKEN } });
    expect(res.status).toBe(201);
    const { workflow_id: workflowId } = (await res.json()) as { workflow_id: string };
    await waitFor(`run ${workflowId} to end`, async () => {
      const run = (await (await call(`/api/workflows/${workflowId}`)).json()) as { status: string };
      return ['COMPLETED', 'FAILED'].includes(run.status) ? run : undefined;
    });

    const root = await waitFor('the POST /start span', async () =>
      spans.find((s) => s.name === 'POST /api/workflows/start' && attribute(s, 'workflow_id') === workflowId),
    );
    expect(root.parentSpanId || undefined).toBeUndefined();
    expect(attribute(root, 'workflow_type')).toBe(TYPE);
    expect(attribute(root, 'organization_uuid')).toBe(organization);
    expect(attribute(root, 'http.response.status_code')).toBe('201');

    // Every span of the run, once the workflow's own (exported when its task completes) are in. The
    // run's start is written inside the provider call's activity (written ahead), its end by a local activity.
    const expected = [`StartWorkflow:${TYPE}`, `RunWorkflow:${TYPE}`, 'RunActivity:projectTransition'];
    const complete = (names: string[]) => expected.every((n) => names.includes(n)) && names.some((n) => n.startsWith('e-signature API '));
    let trace: OtlpSpan[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      trace = spans.filter((s) => s.traceId === root.traceId);
      if (complete(trace.map((s) => s.name))) break;
    }
    const names = trace.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(expected));
    expect(names).toEqual(expect.arrayContaining([expect.stringMatching(/^RunActivity:esign/), expect.stringMatching(/^e-signature API /)]));

    // One tree: every span's parent is in the trace, up to the request's span.
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    for (const span of trace) {
      let at = span;
      for (let hops = 0; at.parentSpanId && hops < 50; hops++) {
        const parent = byId.get(at.parentSpanId);
        expect({ span: span.name, parentFound: Boolean(parent) }).toEqual({ span: span.name, parentFound: true });
        at = parent!;
      }
      expect(at.spanId).toBe(root.spanId);
    }

    const ancestors = (span: OtlpSpan): string[] => (span.parentSpanId ? [byId.get(span.parentSpanId)!.name, ...ancestors(byId.get(span.parentSpanId)!)] : []);
    const provider = trace.find((s) => s.name.startsWith('e-signature API '))!;
    expect(provider.kind).toBe(3); // CLIENT
    expect(attribute(provider, 'http.response.status_code')).toBe('200');
    expect(ancestors(provider)[0]).toMatch(/^RunActivity:esign/);
    expect(ancestors(provider)).toContain(`RunWorkflow:${TYPE}`);

    for (const activity of trace.filter((s) => s.name.startsWith('RunActivity:'))) {
      expect([activity.name, attribute(activity, 'workflow_id'), attribute(activity, 'workflow_type'), attribute(activity, 'organization_uuid')]).toEqual([
        activity.name,
        workflowId,
        TYPE,
        organization,
      ]);
    }
    // The run's token went to the provider, never into a span.
    expect(bodies.join('\n')).not.toContain(ESIGN_VALID_TOKEN);
    expect(bodies.join('\n')).not.toContain(token);
  });
});
