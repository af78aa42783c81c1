import type { EventSourceMessage } from 'eventsource-parser';
import type { RunFailure } from './errors.js';

export interface TransitionEvent {
  type: 'transition';
  seq: number;
  from: string;
  to: string;
  action: string;
  at: string;
}
export interface CompletedEvent<Output = Record<string, unknown>> {
  type: 'completed';
  stateName: string;
  stateData: Output;
}
export interface FailedEvent {
  type: 'failed';
  stateName: string;
  error: RunFailure;
  stateData: Record<string, unknown>;
}
export type RunEvent<Output = Record<string, unknown>> = TransitionEvent | CompletedEvent<Output> | FailedEvent;

/** The typed event for one SSE message of GET /workflows/{id}/stream. */
export function toRunEvent<Output>(message: Pick<EventSourceMessage, 'event' | 'data'>): RunEvent<Output> | undefined {
  const data = JSON.parse(message.data) as Record<string, any>;
  switch (message.event) {
    case 'transition':
      return { type: 'transition', seq: data.seq, from: data.from, to: data.to, action: data.action, at: data.at };
    case 'completed':
      return { type: 'completed', stateName: data.state_name, stateData: data.state_data as Output };
    case 'failed': {
      const { message: text, ...fields } = (data.error ?? {}) as Record<string, unknown>;
      const error: RunFailure = { message: String(text ?? 'run failed'), failureType: fields.failure_type as string | undefined, fields };
      return { type: 'failed', stateName: data.state_name, error, stateData: data.state_data ?? {} };
    }
    default:
      return undefined; // an event type this SDK does not know yet
  }
}
