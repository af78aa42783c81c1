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
import { PROJECTION_REJECTED, type ProjectionActivities, type TransitionEvent } from './contract';
import { projectionRejection, type StepFailure } from './failure';

// The projection must eventually succeed, so it retries without limit: a Postgres
// outage pauses runs at their next transition instead of losing transitions. A write the
// database refuses for its data fails at once (projection_rejected), and the run fails.
export const projection = proxyLocalActivities<ProjectionActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/**
 * On an activity whose last argument is a transition the worker writes before the activity runs.
 * The header holds only the transition's seq: headers skip the payload codec, the arguments do not.
 */
export const WRITE_AHEAD_HEADER = 'engine-transition-ahead';

/** Thrown by the worker when it could not write the transition ahead; the activity itself did not run. */
export const TRANSITION_NOT_WRITTEN = 'transition_not_written';

/**
 * Lets the worker start writing a handed-off transition while Temporal dispatches the activity
 * that carries it, instead of after. Not called on replay; the activity writes it either way.
 */
export interface WriteAheadSinks extends Sinks {
  transitions: { handedOff(event: TransitionEvent): void };
}
const { transitions } = proxySinks<WriteAheadSinks>();

/** The projection's own local activities: they are the writes, so nothing is written before them. */
const PROJECTION_ACTIVITIES = new Set<string>(['projectRunStarted', 'projectTransition']);

/** Why the database refused the deferred transition: the run must go back to before it. */
export interface RefusedTransition {
  failure: StepFailure;
}

/**
 * Writes a run's transitions with the step that follows them. A transition into a state whose
 * step is an activity is not written by a local activity of its own: the activity carries it
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
  private pending?: TransitionEvent;
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
    this.pending = undefined;
  }

  /** Leaves `event` for the next activity to write; a transition still pending is written first. */
  async defer(event: TransitionEvent): Promise<void> {
    await this.write();
    this.pending = event;
  }

  /**
   * Writes what is pending, then `event`, through the local activity. A refusal of the pending
   * transition is kept (every later command rethrows it) and thrown; one of `event` is thrown
   * as the local activity threw it.
   */
  async write(event?: TransitionEvent): Promise<void> {
    this.throwIfRefused();
    const pending = this.pending;
    if (pending) {
      try {
        await this.writeNow(pending);
      } catch (err) {
        const rejection = projectionRejection(err);
        if (!rejection) throw err;
        this.refusal = { failure: rejection };
        this.throwIfRefused();
      }
      if (this.pending === pending) this.pending = undefined;
    }
    if (event) await this.writeNow(event);
  }

  /** The outbound interceptor for activities: hands the pending transition to the activity. */
  async scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    this.throwIfRefused();
    const event = this.pending;
    if (!event) return next(input);
    transitions.handedOff(event);
    let result: unknown;
    try {
      result = await next({
        ...input,
        args: [...input.args, event],
        headers: { ...input.headers, [WRITE_AHEAD_HEADER]: defaultPayloadConverter.toPayload(event.seq) },
      });
    } catch (err) {
      if (!notWritten(err)) throw err;
      // The worker could not write it (the database is down, say): write it here, where the
      // local activity retries until it can, then run the activity without it.
      await this.write();
      return next(input);
    }
    if (this.pending === event) this.pending = undefined;
    return result;
  }

  /**
   * For every other command: `give` runs once what is pending is written. With nothing pending
   * it runs at once, so commands given together keep their order (replays compare it).
   */
  before<T>(give: () => Promise<T>, localActivityType?: string): Promise<T> {
    if (this.refusal) return Promise.reject(this.refusalFailure());
    if (!this.pending || (localActivityType && PROJECTION_ACTIVITIES.has(localActivityType))) return give();
    return this.write().then(give);
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
