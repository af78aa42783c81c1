import { Inject, Injectable } from '@nestjs/common';
import { createSession } from 'better-sse';
import type { Request, Response } from 'express';
import type { Principal } from '../auth/principal';
import { ApiError } from '../common/api-error';
import { CONFIG, LOGGER } from '../common/di';
import type { AppConfig } from '../config';
import type { Logger } from '../logger';
import { runView, transitionView } from './run-views';
import { RunsService } from './runs.service';
import { TransitionBus } from './transition-bus.service';

/** A safety net under LISTEN/NOTIFY: streams also re-read this often. */
const RESYNC_MS = 5_000;

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
 */
@Injectable()
export class RunStreamService {
  /** Open streams per token in this API process. */
  private readonly open = new Map<string, number>();

  constructor(
    private readonly runs: RunsService,
    private readonly bus: TransitionBus,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async stream(workflowId: string, principal: Principal, req: Request, res: Response): Promise<void> {
    await this.runs.requireRun(workflowId, principal);
    const max = this.config.limits.streamsPerToken;
    const opened = this.open.get(principal.user_id) ?? 0;
    if (max > 0 && opened >= max) {
      throw new ApiError(429, 'too_many_streams', `this token already has ${opened} open streams (limit ${max}); close one first`, null, {
        'Retry-After': '1',
      });
    }
    this.open.set(principal.user_id, opened + 1);
    res.once('close', () => {
      const left = (this.open.get(principal.user_id) ?? 1) - 1;
      if (left > 0) this.open.set(principal.user_id, left);
      else this.open.delete(principal.user_id);
    });
    const session = await createSession(req, res, { keepAlive: this.config.sseKeepAliveMs });
    const lastEventId = Number.parseInt(session.lastId, 10);
    let sent = Number.isInteger(lastEventId) && lastEventId > 0 ? lastEventId : 0;
    let closed = false;
    let running = false;
    let again = false;

    const close = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      clearInterval(resync);
      res.end();
    };

    const pump = async (): Promise<void> => {
      if (closed) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          for (const row of await this.runs.transitionsAfter(workflowId, sent)) {
            if (closed) return;
            const { seq, from, to, action, at } = transitionView(row);
            session.push({ seq, from, to, action, at }, 'transition', String(seq));
            sent = seq;
          }
          const run = await this.runs.findRun(workflowId, principal.organization_uuid);
          if (run?.isTerminal && run.lastSeq <= sent) {
            this.pushEnd(session, runView(run), String(sent));
            close();
          }
        } while (again && !closed);
      } catch (err) {
        this.log.warn({ err, workflow_id: workflowId }, 'stream read failed; will retry');
      } finally {
        running = false;
      }
    };

    const unsubscribe = this.bus.subscribe(workflowId, () => void pump());
    const resync = setInterval(() => void pump(), RESYNC_MS);
    session.on('disconnected', close);
    await pump();
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
