import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { TRANSITIONS_CHANNEL } from '../../activities/projection';
import type { DatabaseHandle, Unlisten } from '../../db/client';
import { DATABASE, LOGGER } from '../common/di';
import type { Logger } from '../logger';

type Wake = () => void;

/**
 * One LISTEN per API process, fanned out to the streams of that process. The
 * notification only says "run X has something new": streams read the
 * transitions themselves, so a missed or duplicated notification loses and
 * repeats nothing.
 */
@Injectable()
export class TransitionBus implements OnModuleInit, OnModuleDestroy {
  private readonly subscribers = new Map<string, Set<Wake>>();
  private unlisten?: Unlisten;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async onModuleInit() {
    this.unlisten = await this.database.listen(
      TRANSITIONS_CHANNEL,
      (payload) => this.wake(payload.slice(0, payload.lastIndexOf(':'))),
      () => {
        this.log.warn('transition listener reconnected; waking every stream');
        for (const id of this.subscribers.keys()) this.wake(id);
      },
    );
  }

  async onModuleDestroy() {
    await this.unlisten?.();
  }

  subscribe(workflowId: string, wake: Wake): () => void {
    let set = this.subscribers.get(workflowId);
    if (!set) this.subscribers.set(workflowId, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (!set.size) this.subscribers.delete(workflowId);
    };
  }

  private wake(workflowId: string) {
    for (const wake of this.subscribers.get(workflowId) ?? []) wake();
  }
}
