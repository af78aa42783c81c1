import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { type Dispatcher, fetch, Headers, type Response } from 'undici';
import { withOutcomeUnknown } from '../workflows/runtime/provider-outcome';
import { wellFormed } from '../workflows/runtime/storable-text';
import { originOf, sameOrigin } from './origin';
import { outboundUrlProblem } from './outbound';
import { type AttemptLedger, currentLedger } from './provider-attempts';
import { providerSpan } from './provider-span';
import { type Scrubber, scrubber } from './scrub';

export interface ProviderHttpConfig {
  allowHttpHosts: readonly string[];
  timeoutMs: number;
  /** From createOutboundDispatcher: the outbound policy is enforced on every connection it opens. */
  dispatcher: Dispatcher;
}

export interface ProviderResponse {
  status_code: number;
  response: unknown;
  /** A re-sent DELETE found the resource gone after an earlier attempt's outcome was lost. */
  already_absent?: true;
}

export interface ProviderRequest {
  method: string;
  url: string;
  provider: string;
  /** The bearer token and the one origin it belongs to: it is never sent anywhere else. */
  credential?: { bearer: string; origin: string };
  /** The call's other secrets (every value of the connection used): cut out of whatever the provider answers. */
  secrets?: readonly string[];
  /** The run this call belongs to re-drives one whose call may have acted at the provider unanswered. */
  earlierOutcomeUnknown?: boolean;
}

/** failure_type values for provider answers, so a failed run says what went wrong. */
export function failureTypeForStatus(status: number): string {
  if (status >= 300 && status < 400) return 'redirect_refused';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  return 'client_error';
}

function providerMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  const parts = [b.errorCode ?? b.code ?? b.error, b.message].filter((p) => typeof p === 'string' && p);
  return parts.length ? parts.join(': ') : undefined;
}

/**
 * The most of a provider's answer a run keeps. What is kept travels as an activity result, in the
 * run's state and its terminal output, each a Temporal payload of at most 2 MiB by default: an
 * answer past that fails no workflow task, it fails the call, at once and for good.
 */
export const MAX_PROVIDER_ANSWER_BYTES = 1024 * 1024;

class AnswerTooLarge extends Error {}

/** The body as text, read no further than MAX_PROVIDER_ANSWER_BYTES (nor held in memory past it). */
async function readText(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (declared > MAX_PROVIDER_ANSWER_BYTES) {
    await res.body?.cancel();
    throw new AnswerTooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    // Leaving the loop cancels the stream: the rest is never read.
    if (size > MAX_PROVIDER_ANSWER_BYTES) throw new AnswerTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readBody(res: Response): Promise<unknown> {
  const text = await readText(res);
  if (!text.trim()) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  // A JSON escape can carry a lone surrogate ("\ud800"), which no database column stores.
  return wellFormed(parsed);
}

/**
 * One provider HTTP call with the engine's failure semantics: 2xx returns;
 * 4xx is a non-retryable failure keeping status_code and response; 5xx,
 * time-outs and network errors are retryable so Temporal's retry policy
 * backs off and tries again, until they have spent the call's budget
 * (provider-attempts.ts), when they become non-retryable. A DELETE answered
 * 404 after an earlier attempt whose outcome is unknown returns `already_absent`; a failure
 * after one is marked so (provider-outcome.ts), for a retry of the run to know.
 */
export async function callProvider(config: ProviderHttpConfig, request: ProviderRequest): Promise<ProviderResponse> {
  const problem = outboundUrlProblem(request.url, config.allowHttpHosts);
  if (problem) {
    throw ApplicationFailure.nonRetryable(`base_url ${problem}`, 'https_required');
  }
  if (request.credential && !sameOrigin(request.url, request.credential.origin)) {
    throw ApplicationFailure.nonRetryable(
      `the credential of this call belongs to ${originOf(request.credential.origin) ?? 'no valid origin'}, not to ${originOf(request.url)}`,
      'connection_destination_mismatch',
    );
  }
  const ledger = currentLedger();
  if (request.earlierOutcomeUnknown) ledger.assumeEarlierOutcomeUnknown();
  const stopHeartbeat = heartbeatWhileWaiting();
  try {
    return await send(config, request, scrubber([request.credential?.bearer, ...(request.secrets ?? [])]), ledger);
  } catch (err) {
    // A run-level retry is a new execution, without these heartbeat details: the failure tells the workflow.
    throw err instanceof ApplicationFailure && ledger.earlierOutcomeUnknown ? withOutcomeUnknown(err) : err;
  } finally {
    stopHeartbeat();
  }
}

/**
 * While a provider call is in flight the activity heartbeats, so a worker
 * killed mid-call is noticed after the heartbeat timeout, not the (long)
 * start-to-close timeout. Each heartbeat carries the attempt's budget record:
 * a heartbeat without it would erase what earlier attempts left. Outside an
 * activity (unit tests) it does nothing.
 */
export function heartbeatWhileWaiting(): () => void {
  const ledger = currentLedger();
  const timer = setInterval(() => ledger.heartbeat(), 1_000);
  return () => clearInterval(timer);
}

/** A retryable provider failure counts against the budget; the one that spends it is final. */
function providerFailure(ledger: AttemptLedger, answered: boolean, message: string, type: string, kept?: ProviderResponse): ApplicationFailure {
  const spent = ledger.providerFailed(answered);
  return ApplicationFailure.create({ message, type, nonRetryable: spent, details: kept ? [kept] : undefined });
}

/** The activity's cancellation (delivered on a heartbeat), or undefined outside an activity. */
function activityCancellation(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

/** A cancelled run must not leave its provider call running until the time-out. */
export function callSignal(timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  const cancelled = activityCancellation();
  return cancelled ? AbortSignal.any([timeout, cancelled]) : timeout;
}

export interface FetchFailure {
  kind: 'outbound_policy' | 'timeout' | 'unreachable';
  /** The cause's message when there is one: fetch's own says only "fetch failed". */
  detail: string;
}

/**
 * Why a fetch signalled with callSignal threw. The activity's cancellation is thrown on as it
 * is: Temporal must see the activity cancelled, not a provider failure to record and retry.
 */
export function fetchFailure(err: unknown): FetchFailure {
  const cancelled = activityCancellation();
  if (cancelled?.aborted) throw cancelled.reason;
  // By name, not instanceof: fetch's errors may come from another realm.
  const cause = (err as { cause?: { name?: unknown; message?: unknown } })?.cause;
  const detail = String(cause?.message ?? (err as Error)?.message);
  if (cause?.name === 'OutboundPolicyError') return { kind: 'outbound_policy', detail };
  const name = (err as { name?: unknown })?.name;
  return { kind: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'unreachable', detail };
}

/**
 * Everything built from the provider's answer (the kept body, the message, a network error's
 * text) is stored, projected and logged, and failure messages sit in clear in Temporal
 * history: all of it passes through `scrub` first, since a provider may quote the request's
 * credentials back (a 401 saying "bad token Bearer …").
 */
async function send(config: ProviderHttpConfig, request: ProviderRequest, scrub: Scrubber, ledger: AttemptLedger): Promise<ProviderResponse> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (request.credential) headers.authorization = `Bearer ${request.credential.bearer}`;
  try {
    // What fetch would refuse with a TypeError, looking like a network failure to retry: a
    // token no header can carry (stored before tokens were checked) fails the same way every time.
    new Headers(headers);
  } catch {
    // Not the error's text: it quotes the header, token included.
    throw ApplicationFailure.nonRetryable(
      `${request.provider} not called: the API token holds a character no HTTP header may carry (a line break, or one above U+00FF); a token is visible ASCII`,
      'invalid_input',
    );
  }
  let res: Response;
  try {
    res = await providerSpan(request.provider, request.method, request.url, headers, () =>
      fetch(request.url, {
        method: request.method,
        headers,
        signal: callSignal(config.timeoutMs),
        // Answered, not followed: a redirect is the provider's answer, reported with its status.
        redirect: 'manual',
        dispatcher: config.dispatcher,
      }),
    );
  } catch (err) {
    const { kind, detail } = fetchFailure(err);
    if (kind === 'outbound_policy') throw ApplicationFailure.nonRetryable(`${request.provider} not called: ${detail}`, 'outbound_policy');
    const message =
      kind === 'timeout'
        ? `${request.provider} did not answer within ${config.timeoutMs} ms`
        : `${request.provider} unreachable: ${scrub.text(detail)}`;
    throw providerFailure(ledger, false, message, kind);
  }
  let body: unknown;
  try {
    body = scrub.value(await readBody(res));
  } catch (err) {
    if (!(err instanceof AnswerTooLarge)) throw err;
    const limit = `${MAX_PROVIDER_ANSWER_BYTES / 1024 / 1024} MiB`;
    throw ApplicationFailure.nonRetryable(`${request.provider} answered HTTP ${res.status} with more than ${limit}, more than a run keeps`, 'response_too_large', {
      status_code: res.status,
    });
  }
  if (res.ok) return { status_code: res.status, response: body };
  // The lost attempt's DELETE may well be what removed it: the deletion is done either way.
  if (res.status === 404 && request.method === 'DELETE' && ledger.earlierOutcomeUnknown) {
    return { status_code: res.status, response: body, already_absent: true };
  }
  const detail = providerMessage(body);
  const message = `${request.provider} answered HTTP ${res.status}${detail ? `: ${detail}` : ''}`;
  const type = failureTypeForStatus(res.status);
  const kept: ProviderResponse = { status_code: res.status, response: body };
  if (res.status >= 500 || res.status === 429) throw providerFailure(ledger, true, message, type, kept);
  throw ApplicationFailure.nonRetryable(message, type, kept);
}
