import { ActivityFailure, ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import {
  type ActivityInput,
  CancellationScope,
  type Next,
  proxyLocalActivities,
  proxySinks,
  type Sinks,
  upsertSearchAttributes,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { SA_STATE } from '../constants';
import { PROJECTION_REJECTED, type ProjectionActivities, type RunStartedEvent, type TransitionEvent } from './contract';
import { projectionRejection, type StepFailure } from './failure';

// The projection must eventually succeed, so it retries without limit: a Postgres
// outage pauses runs at their next transition instead of losing transitions. A write the
// database refuses for its data fails at once (projection_rejected), and the run fails.
export const projection = proxyLocalActivities<ProjectionActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** What an activity carries for the worker to write before it runs: its run's start, the transition into its step, or both. */
export interface CarriedWrites {
  started?: RunStartedEvent;
  transition?: TransitionEvent;
}

/**
 * On an activity whose last argument is CarriedWrites. The header names them only (`start`, the
 * transition's seq): headers skip the payload codec, the arguments do not.
 */
export const WRITE_AHEAD_HEADER = 'engine-transition-ahead';

/** Thrown by the worker when it could not write what the activity carried; the activity itself did not run. */
export const TRANSITION_NOT_WRITTEN = 'transition_not_written';

/**
 * Lets the worker start writing what it is handed while Temporal dispatches the activity that
 * carries it, instead of after. Not called on replay; the activity writes it either way.
 */
export interface WriteAheadSinks extends Sinks {
  transitions: { handedOff(writes: CarriedWrites): void };
}
const { transitions } = proxySinks<WriteAheadSinks>();

/** The projection's own local activities: they are the writes, so nothing is written before them. */
const PROJECTION_ACTIVITIES = new Set<string>(['projectRunStarted', 'projectTransition']);

/** Why the database refused the deferred transition: the run must go back to before it. */
export interface RefusedTransition {
  failure: StepFailure;
}

/**
 * Writes a run's start and transitions with the step that follows them. A transition into a state
 * whose step is an activity (or the start of a run whose first step is one) is not written by a
 * local activity of its own: the activity carries it
 * (after its own arguments, so the payload codec encrypts it) and the worker writes it before
 * running the activity (activities/write-ahead.ts). Every other command the run gives (a
 * timer, a child, a local activity, a signal, continue-as-new) and every wait or end writes what
 * is pending first, through the projection's local activity. So a transition is still in the
 * database before the next side effect, and a database outage still pauses the run there.
 *
 * One per workflow execution: the workflow sandbox keeps module state per execution. The
 * interceptors (workflows/interceptors.ts) switch it on; a worker without them writes every
 * transition through the local activity. An action handler that waits on a condition must write
 * first (`writeAhead.write()`); none does.
 *
 * The state search attribute follows the transitions the workflow writes itself, which are
 * those where a run waits or ends; between them it is the state the run last rested in.
 */
export class WriteAhead {
  private enabled = false;
  private pending: CarriedWrites = {};
  private refusal?: RefusedTransition;
  private attribute?: string;

  /** Called by the workflow interceptors: the activities this run schedules can carry its transitions. */
  enable(): void {
    this.enabled = true;
  }

  get available(): boolean {
    return this.enabled;
  }

  /** The state the search attribute holds now (set at start). */
  attributeIs(state: string): void {
    this.attribute = state;
  }

  /** The deferred transition the database refused, if one was. */
  get refused(): RefusedTransition | undefined {
    return this.refusal;
  }

  /** Forgets a refused transition once the run has gone back to before it. */
  clearRefusal(): void {
    this.refusal = undefined;
    this.pending = {};
  }

  /** Leaves the run's start for the next activity to write. */
  deferStart(event: RunStartedEvent): void {
    this.pending = { started: event };
  }

  /**
   * Leaves `event` for the next activity to write; a transition still pending is written first.
   * Returns that write when there is one: a promise only when needed, since in the workflow
   * sandbox each one costs a stack capture (engine.ts, take).
   */
  defer(event: TransitionEvent): Promise<void> | undefined {
    const pend = () => {
      this.pending = { ...this.pending, transition: event };
    };
    if (this.pending.transition) return this.write().then(pend);
    pend();
    return undefined;
  }

  /**
   * Writes what is pending, then `event`, through the local activity. A refusal of the pending
   * transition is kept (every later command rethrows it) and thrown; one of the start or of
   * `event` is thrown as the local activity threw it (the start stays pending: every later
   * command tries it again).
   */
  async write(event?: TransitionEvent): Promise<void> {
    this.throwIfRefused();
    const { started, transition } = this.pending;
    if (started) {
      // A cancel request must not interrupt a write.
      await CancellationScope.nonCancellable(() => projection.projectRunStarted(started));
      this.settled({ started });
    }
    if (transition) {
      try {
        await this.writeNow(transition);
      } catch (err) {
        const rejection = projectionRejection(err);
        if (!rejection) throw err;
        this.refusal = { failure: rejection };
        this.throwIfRefused();
      }
      this.settled({ transition });
    }
    if (event) await this.writeNow(event);
  }

  /**
   * The outbound interceptor for activities: hands what is pending to the activity. Not async:
   * every activity of every run passes here, and each promise costs a stack capture (engine.ts, take).
   */
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    if (this.refusal) return Promise.reject(this.refusalFailure());
    const carried = this.pending;
    if (!this.hasPending()) return next(input);
    transitions.handedOff(carried);
    const names = [...(carried.started ? ['start'] : []), ...(carried.transition ? [carried.transition.seq] : [])];
    const carrying = next({
      ...input,
      args: [...input.args, carried],
      headers: { ...input.headers, [WRITE_AHEAD_HEADER]: defaultPayloadConverter.toPayload(names.join('+')) },
    });
    return carrying.then(
      (result) => {
        this.settled(carried);
        return result;
      },
      async (err) => {
        if (!notWritten(err)) throw err;
        // The worker could not write it (the database is down, say): write it here, where the
        // local activity retries until it can, then run the activity without it.
        await this.write();
        return next(input);
      },
    );
  }

  /**
   * For every other command: `give` runs once what is pending is written. With nothing pending
   * it runs at once, so commands given together keep their order (replays compare it).
   */
  before<T>(give: () => Promise<T>, localActivityType?: string): Promise<T> {
    if (this.refusal) return Promise.reject(this.refusalFailure());
    if (!this.hasPending() || (localActivityType && PROJECTION_ACTIVITIES.has(localActivityType))) return give();
    return this.write().then(give);
  }

  private hasPending(): boolean {
    return this.pending.started !== undefined || this.pending.transition !== undefined;
  }

  /** Drops what was written from what is pending, unless something newer replaced it meanwhile. */
  private settled(written: CarriedWrites): void {
    const { started, transition } = this.pending;
    this.pending = {
      started: started === written.started ? undefined : started,
      transition: transition === written.transition ? undefined : transition,
    };
  }

  private async writeNow(event: TransitionEvent): Promise<void> {
    // A cancel request must not interrupt a write: the run would lose track of the seq it stored.
    await CancellationScope.nonCancellable(() => projection.projectTransition(event));
    if (event.to !== this.attribute) {
      upsertSearchAttributes([{ key: SA_STATE, value: event.to }]);
      this.attribute = event.to;
    }
  }

  private throwIfRefused(): void {
    if (this.refusal) throw this.refusalFailure();
  }

  private refusalFailure(): ApplicationFailure {
    return ApplicationFailure.nonRetryable(this.refusal?.failure.message, PROJECTION_REJECTED);
  }
}

function notWritten(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === TRANSITION_NOT_WRITTEN;
}

export const writeAhead = new WriteAhead();
