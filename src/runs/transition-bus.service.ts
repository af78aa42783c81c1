import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { TRANSITIONS_CHANNEL } from '../../activities/projection';
import type { DatabaseHandle, Unlisten } from '../../db/client';
import type { runs, transitions } from '../../db/schema';
import { DATABASE, LOGGER } from '../common/di';
import type { Logger } from '../logger';
import { RunsService } from './runs.service';

/** A safety net under LISTEN/NOTIFY (a notification lost, or one from a worker without the terminal marker). */
const RESYNC_MS = 5_000;

export type RunRow = typeof runs.$inferSelect;
export type TransitionRow = typeof transitions.$inferSelect;

export interface RunSubscriber {
  /** The last seq this subscriber has; the bus advances it as it delivers. */
  seen: number;
  transition(row: TransitionRow): void;
  /** The run has ended and this subscriber has every transition; the bus delivers nothing more to it. */
  end(run: RunRow): void;
}

/**
 * The one reader of a run's new transitions for all of its subscribers in this process, so the
 * database work per committed transition does not grow with the number of streams.
 */
class RunReader {
  readonly subscribers = new Set<RunSubscriber>();
  private reading = false;
  private again = false;
  private checkEnd = false;
  private readonly resync: NodeJS.Timeout;

  constructor(
    private readonly workflowId: string,
    private readonly organizationUuid: string,
    private readonly runs: RunsService,
    private readonly log: Logger,
  ) {
    this.resync = setInterval(() => this.wake(true), RESYNC_MS);
  }

  /** `checkEnd`: the run may have ended, so read its row too; a non-terminal notification saves that query. */
  wake(checkEnd: boolean) {
    this.checkEnd ||= checkEnd;
    this.again = true;
    if (!this.reading) void this.read();
  }

  stop() {
    clearInterval(this.resync);
  }

  /** Wakes during a read are folded into one more read after it. */
  private async read() {
    this.reading = true;
    try {
      while (this.again && this.subscribers.size) {
        this.again = false;
        const checkEnd = this.checkEnd;
        this.checkEnd = false;
        // Who joins during this read is served by the next one: these rows may start after what it has.
        const subscribers = [...this.subscribers];
        // The run row before the transitions: once it says terminal, the read after it has every transition up to lastSeq.
        const run = checkEnd ? await this.runs.findRun(this.workflowId, this.organizationUuid) : undefined;
        const rows = await this.runs.transitionsAfter(this.workflowId, Math.min(...subscribers.map((s) => s.seen)));
        for (const s of subscribers) {
          for (const row of rows) {
            if (!this.subscribers.has(s)) break;
            if (row.seq <= s.seen) continue;
            s.seen = row.seq;
            s.transition(row);
          }
          if (run?.isTerminal && run.lastSeq <= s.seen && this.subscribers.delete(s)) s.end(run);
        }
      }
    } catch (err) {
      this.log.warn({ err, workflow_id: this.workflowId }, 'stream read failed; will retry');
    } finally {
      this.reading = false;
    }
  }
}

/**
 * One LISTEN per API process, and one reader per run with subscribers in it. The notification
 * ("<workflow_id>:<seq>", "t" appended when the transition ended the run) only says "run X has
 * something new": the reader reads the transitions itself, so a missed or duplicated
 * notification loses and repeats nothing.
 */
@Injectable()
export class TransitionBus implements OnModuleInit, OnModuleDestroy {
  private readonly readers = new Map<string, RunReader>();
  private unlisten?: Unlisten;

  constructor(
    private readonly runs: RunsService,
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async onModuleInit() {
    this.unlisten = await this.database.listen(
      TRANSITIONS_CHANNEL,
      (payload) => this.readers.get(payload.slice(0, payload.lastIndexOf(':')))?.wake(payload.endsWith('t')),
      () => {
        this.log.warn('transition listener reconnected; waking every stream');
        for (const reader of this.readers.values()) reader.wake(true);
      },
    );
  }

  async onModuleDestroy() {
    for (const reader of this.readers.values()) reader.stop();
    await this.unlisten?.();
  }

  /**
   * Delivers the run's transitions after `subscriber.seen`, live, then its end. The caller has
   * checked that the run belongs to `organizationUuid`: a workflow id is one run of one organization.
   */
  subscribe(workflowId: string, organizationUuid: string, subscriber: RunSubscriber): () => void {
    const reader = this.readers.get(workflowId) ?? new RunReader(workflowId, organizationUuid, this.runs, this.log);
    this.readers.set(workflowId, reader);
    reader.subscribers.add(subscriber);
    // The run may have ended before this subscriber joined, with no notification to come.
    reader.wake(true);
    return () => {
      reader.subscribers.delete(subscriber);
      // A second call may come after another reader took this run's place.
      if (reader.subscribers.size || this.readers.get(workflowId) !== reader) return;
      reader.stop();
      this.readers.delete(workflowId);
    };
  }
}
