import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { createParser } from 'eventsource-parser';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { waitFor } from './ports';

/** What global-setup started, read from the environment it exported. */
export const stackEnv = {
  get apiUrl() {
    return process.env.TEST_API_URL!;
  },
  get temporalAddress() {
    return process.env.TEST_TEMPORAL_ADDRESS!;
  },
  get esignUrl() {
    return process.env.TEST_ESIGN_URL!;
  },
  get logFile() {
    return process.env.TEST_LOG_FILE!;
  },
  get orgA() {
    return process.env.TEST_ORG_A!;
  },
  get tokenA() {
    return process.env.TEST_TOKEN_A!;
  },
  get orgB() {
    return process.env.TEST_ORG_B!;
  },
  get tokenB() {
    return process.env.TEST_TOKEN_B!;
  },
  get split() {
    return process.env.TEST_STACK_SPLIT === '1';
  },
};

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function api<T = any>(
  path: string,
  options: { token?: string | null; method?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? stackEnv.tokenA : options.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const res = await fetch(stackEnv.apiUrl + path, { method: options.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

export async function startRun(workflowType: string, initialData: Record<string, unknown>, token = stackEnv.tokenA) {
  const res = await api('/api/workflows/start', { token, body: { workflow_type: workflowType, initial_data: initialData } });
  if (res.status !== 201) throw new Error(`start answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.workflow_id as string;
}

export async function waitForTerminal(workflowId: string, token = stackEnv.tokenA, timeoutMs = 45_000) {
  return waitFor(
    `run ${workflowId} to end`,
    async () => {
      const res = await api(`/api/workflows/${workflowId}`, { token });
      return res.body?.is_terminal ? res.body : undefined;
    },
    timeoutMs,
    150,
  );
}

export async function waitForState(workflowId: string, state: string, token = stackEnv.tokenA) {
  return waitFor(`run ${workflowId} to reach ${state}`, async () => {
    const res = await api(`/api/workflows/${workflowId}`, { token });
    return res.body?.state_name === state ? res.body : undefined;
  });
}

export interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

/**
 * Reads an SSE stream until the server closes it or `stopAfter` events have
 * arrived. Counts keep-alive comments separately.
 */
export async function readStream(
  workflowId: string,
  options: { token?: string; lastEventId?: string; stopAfter?: number; timeoutMs?: number } = {},
): Promise<{ status: number; events: SseEvent[]; comments: number; contentType: string | null }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 45_000);
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? stackEnv.tokenA}`, accept: 'text/event-stream' };
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  const events: SseEvent[] = [];
  let comments = 0;
  const res = await fetch(`${stackEnv.apiUrl}/api/workflows/${workflowId}/stream`, { headers, signal: controller.signal });
  const contentType = res.headers.get('content-type');
  if (!res.ok || !res.body) {
    clearTimeout(timer);
    return { status: res.status, events, comments, contentType };
  }
  let stopped = false;
  const parser = createParser({
    onEvent: (e) => {
      if (stopped) return;
      events.push({ event: e.event ?? 'message', id: e.id, data: JSON.parse(e.data) });
      stopped = Boolean(options.stopAfter && events.length >= options.stopAfter);
    },
    onComment: () => (comments += 1),
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (stopped) {
        controller.abort();
        break;
      }
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  } finally {
    clearTimeout(timer);
  }
  return { status: res.status, events, comments, contentType };
}

export async function control(action: 'kill' | 'start', role?: 'api' | 'worker' | 'all') {
  const url = new URL(`${process.env.TEST_CONTROL_URL}/${action}`);
  if (role) url.searchParams.set('role', role);
  const res = await fetch(url, { method: 'POST' });
  if (!res.ok) throw new Error(`control ${action} failed: ${await res.text()}`);
}

export async function esignCalls(pathFragment: string): Promise<Array<{ method: string; path: string; authorization: string | null }>> {
  const base = new URL(stackEnv.esignUrl);
  const res = await fetch(`${base.origin}/__calls`);
  const calls = (await res.json()) as Array<{ method: string; path: string; authorization: string | null }>;
  return calls.filter((c) => c.path.includes(pathFragment));
}

/**
 * Where any secret shows up: "<secret name> in <place>: <the line holding it>", for each
 * `[place, text]`. An empty list is the assertion.
 */
export function secretLeaks(secrets: Record<string, string>, places: Array<[string, string]>): string[] {
  return places.flatMap(([what, text]) =>
    Object.entries(secrets)
      .filter(([, secret]) => text.includes(secret))
      .map(([name, secret]) => `${name} in ${what}: ${(text.split('\n').find((l) => l.includes(secret)) ?? '').slice(0, 300)}`),
  );
}

export const uniqueId = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/**
 * A new organization in the shared stack's database, and its token: for assertions about everything
 * an organization sees (its run list, its catalog), which other suites must not add to.
 */
export function freshOrg(prefix: string): { organization_uuid: string; token: string } {
  const env = { ...process.env, PORT: '0' } as NodeJS.ProcessEnv;
  if (process.env.TEST_DATABASE_URL) env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  else env.DATA_DIR = path.join(process.env.TEST_WORK_DIR!, 'data');
  return JSON.parse(execFileSync(process.execPath, ['dist/src/cli.js', 'org', 'create', uniqueId(prefix), '--json'], { env, encoding: 'utf8' }));
}

export const freshOrgToken = (prefix: string): string => freshOrg(prefix).token;

/** Input of an e-signature delete against the stack's double; `behaviour` picks the double's answer (see esign-double.ts). */
export const esignDeleteInput = (behaviour: string) => ({
  base_url: stackEnv.esignUrl,
  api_token: ESIGN_VALID_TOKEN,
  accountid: '4711',
  userid: uniqueId('user'),
  authorizationid: uniqueId(behaviour),
});

/** Every Payload in a history (inputs, results, failure details, markers, memo, search attributes, headers). */
export function payloadsIn(value: unknown, out: Payload[] = []): Payload[] {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return out;
  const v = value as Record<string, unknown>;
  if (v.metadata && typeof v.metadata === 'object' && 'encoding' in (v.metadata as object)) {
    out.push(v as Payload);
    return out;
  }
  for (const child of Object.values(v)) payloadsIn(child, out);
  return out;
}
