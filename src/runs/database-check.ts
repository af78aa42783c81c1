import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { DatabaseHandle } from '../../db/client';
import { DATABASE } from '../common/di';

/**
 * Whether the database answers, asked before a start reaches Temporal: with the database down a
 * start is refused rather than answered 503 about a run that is executing. Starts arriving while a
 * ping is out share it: its answer still comes after they arrived, and under load they do not queue
 * one ping each behind the worker's writes. PGlite runs in this process, with no server or network
 * between them to lose: it is not asked.
 */
@Injectable()
export class DatabaseCheck {
  private inFlight?: Promise<unknown>;
  /** The check each POST /start began as it arrived (StartDatabaseCheck), by request. */
  private readonly begun = new WeakMap<object, Promise<unknown>>();

  constructor(@Inject(DATABASE) private readonly database: DatabaseHandle) {}

  /**
   * Resolves with the error of the ping, or undefined when the database answered. Settled, so a
   * start refused by its own checks leaves no rejected promise behind.
   */
  ask(): Promise<unknown> {
    if (this.database.kind === 'pglite') return Promise.resolve(undefined);
    this.inFlight ??= this.database
      .ping()
      .then(
        () => undefined,
        (err: unknown) => err,
      )
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  beginFor(req: object): void {
    this.begun.set(req, this.ask());
  }

  /** The check begun as this request arrived, else one asked now. */
  forRequest(req: object): Promise<unknown> {
    return this.begun.get(req) ?? this.ask();
  }
}

/**
 * Begins a start's database check as the request arrives, so the ping runs while the token, the
 * body and the workflow type are checked instead of after. A request refused on the way pays one
 * shared ping at most.
 */
@Injectable()
export class StartDatabaseCheck implements NestMiddleware {
  constructor(private readonly check: DatabaseCheck) {}

  use(req: Request, _res: Response, next: NextFunction): void {
    this.check.beginFor(req);
    next();
  }
}
