import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Connection, createSession } from 'better-sse';
import type { Request, Response } from 'express';
import type { Principal } from '../auth/principal';
import { bearerToken, TokenResolver } from '../auth/token-resolver';
import { watchToken } from '../auth/token-watch';
import { ApiError } from '../common/api-error';
import { CONFIG } from '../common/di';
import type { AppConfig } from '../config';
import { LAST_EVENT_ID, parseLastEventId } from './last-event-id';
import { runView, transitionView } from './run-views';
import { RunsService } from './runs.service';
import { type RunSubscriber, TransitionBus } from './transition-bus.service';

const FAILURE_FIELDS = [
  'failure_reason',
  'failure_type',
  'failed_step',
  'failed_layer',
  'failed_at_state',
  'error',
  'error_type',
  'failed_at',
  'failed_action',
] as const;

/**
 * GET /workflows/{id}/stream: the history after Last-Event-ID, then live
 * transitions (SSE id = seq), then `completed` or `failed`, then the server closes.
 * A stream whose token is revoked gets `revoked` and is closed; at shutdown every stream is
 * closed without an event (the client resumes with Last-Event-ID on another process).
 */
@Injectable()
export class RunStreamService implements OnModuleDestroy {
  /** Open streams per token in this API process. */
  private readonly open = new Map<string, number>();
  private readonly responses = new Set<Response>();

  constructor(
    private readonly runs: RunsService,
    private readonly bus: TransitionBus,
    private readonly tokens: TokenResolver,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleDestroy() {
    for (const res of this.responses) res.end();
  }

  async stream(workflowId: string, principal: Principal, req: Request, res: Response): Promise<void> {
    const after = parseLastEventId(req.get(LAST_EVENT_ID));
    await this.runs.requireRun(workflowId, principal);
    // Express routes HEAD here too: a stream's headers, then the end (no body, no open stream counted).
    if (req.method === 'HEAD') {
      res.status(200).set(Connection.constants.RESPONSE_HEADERS).end();
      return;
    }
    const max = this.config.limits.streamsPerToken;
    const opened = this.open.get(principal.user_id) ?? 0;
    if (max > 0 && opened >= max) {
      throw new ApiError(429, 'too_many_streams', `this token already has ${opened} open streams (limit ${max}); close one first`, null, {
        'Retry-After': '1',
      });
    }
    this.open.set(principal.user_id, opened + 1);
    this.responses.add(res);
    res.once('close', () => {
      this.responses.delete(res);
      const left = (this.open.get(principal.user_id) ?? 1) - 1;
      if (left > 0) this.open.set(principal.user_id, left);
      else this.open.delete(principal.user_id);
    });
    // Last-Event-ID is read above, from the header only (better-sse would also take it from the query).
    const session = await createSession(req, res, { keepAlive: this.config.sseKeepAliveMs, trustClientEventId: false });
    const subscriber: RunSubscriber = {
      seen: after,
      transition: (row) => {
        const { seq, from, to, action, at } = transitionView(row);
        session.push({ seq, from, to, action, at }, 'transition', String(seq));
      },
      end: (run) => {
        // A Last-Event-ID past the end (any number of digits is taken) is not an id this stream sent.
        this.pushEnd(session, runView(run), String(Math.min(subscriber.seen, run.lastSeq)));
        unsubscribe();
        res.end();
      },
    };
    const unsubscribe = this.bus.subscribe(workflowId, principal.organization_uuid, subscriber);
    // Its id is the last seq, as for the end events: a client coming back with another token resumes there.
    const unwatch = watchToken(this.tokens, bearerToken(req.headers.authorization)!, () => {
      unsubscribe();
      session.push({ error: { code: 'unauthorized', message: 'the token was revoked; the stream is closed' } }, 'revoked', String(subscriber.seen));
      res.end();
    });
    session.on('disconnected', () => {
      unsubscribe();
      unwatch();
    });
  }

  /** The end event repeats the last seq as its id, so a reconnect after it replays only the end. */
  private pushEnd(session: Awaited<ReturnType<typeof createSession>>, run: ReturnType<typeof runView>, lastId: string) {
    const stateData = (run.state_data ?? {}) as Record<string, unknown>;
    if (run.status === 'COMPLETED') {
      session.push({ workflow_id: run.workflow_id, state_name: run.state_name, state_data: stateData }, 'completed', lastId);
      return;
    }
    const error: Record<string, unknown> = { message: String(stateData.failure_reason ?? 'run failed') };
    for (const f of FAILURE_FIELDS) if (stateData[f] !== undefined) error[f] = stateData[f];
    session.push({ workflow_id: run.workflow_id, state_name: run.state_name, error, state_data: stateData }, 'failed', lastId);
  }
}
