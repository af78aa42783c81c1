import type { Context } from '@temporalio/activity';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { ActivityExecuteInput } from '@temporalio/worker';
import { transitionWriter } from '../../activities/write-ahead';
import { PROJECTION_REJECTED, type RunStartedEvent, type TransitionEvent } from '../../workflows/runtime/contract';
import { type CarriedWrites, TRANSITION_NOT_WRITTEN, WRITE_AHEAD_HEADER } from '../../workflows/runtime/write-ahead';

/** The worker's half of writing transitions ahead, called as Temporal calls it. */
describe('transitions written ahead by the worker', () => {
  const event = (seq: number): TransitionEvent => ({
    workflow_id: 'wf_ahead',
    organization_uuid: 'org_test',
    workflow_type: 'test.steps',
    version: '1.0',
    attempt: 1,
    seq,
    from: 'one',
    to: 'two',
    action: 'first',
    at: new Date(0).toISOString(),
    data: {},
  });
  const start: RunStartedEvent = { ...event(0), state_name: 'one' };
  const carrying = (e: TransitionEvent, started?: RunStartedEvent): ActivityExecuteInput => ({
    args: [{ own: 'argument' }, { started, transition: e } satisfies CarriedWrites],
    headers: { [WRITE_AHEAD_HEADER]: defaultPayloadConverter.toPayload(started ? `start+${e.seq}` : String(e.seq)) },
  });
  const context = (startToCloseTimeoutMs: number) => ({ info: { startToCloseTimeoutMs } }) as unknown as Context;

  /** `writes` lists what was written: a transition's seq, or "start". */
  function setUp(write: (e: TransitionEvent) => Promise<void>, startToCloseTimeoutMs = 10_000) {
    const writes: (number | string)[] = [];
    const ran: unknown[][] = [];
    const writer = transitionWriter({
      async projectRunStarted() {
        writes.push('start');
      },
      async projectTransition(e) {
        writes.push(e.seq);
        await write(e);
      },
    });
    const inbound = writer.interceptor(context(startToCloseTimeoutMs)).inbound!;
    const execute = (input: ActivityExecuteInput) =>
      inbound.execute!(input, async (i) => {
        ran.push(i.args);
        return 'done';
      });
    const handOff = (e: TransitionEvent) => writer.sinks.transitions.handedOff.fn({} as WorkflowInfo, { transition: e });
    return { writes, ran, execute, handOff };
  }

  const notWritten = async (outcome: Promise<unknown>) => {
    const err = await outcome.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe(TRANSITION_NOT_WRITTEN);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    return (err as ApplicationFailure).message;
  };

  it('writes the carried transition, then runs the activity on its own arguments', async () => {
    const { writes, ran, execute } = setUp(async () => undefined);
    await expect(execute(carrying(event(3)))).resolves.toBe('done');
    expect(writes).toEqual([3]);
    expect(ran).toEqual([[{ own: 'argument' }]]);
  });

  it("writes the run's start before the transition when it carries both", async () => {
    const { writes, ran, execute } = setUp(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    expect(await notWritten(execute(carrying(event(1), start)))).toBe(
      "the run's start and transition 1 not written before the activity: ECONNREFUSED",
    );
    expect(writes).toEqual(['start', 1]);
    expect(ran).toEqual([]);
  });

  it('waits for the write the hand-off started instead of writing again', async () => {
    let finish!: () => void;
    const { writes, ran, execute, handOff } = setUp(() => new Promise<void>((resolve) => (finish = resolve)));
    handOff(event(4));
    const outcome = execute(carrying(event(4)));
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual([4]);
    expect(ran).toEqual([]);
    finish();
    await expect(outcome).resolves.toBe('done');
    expect(writes).toEqual([4]);
  });

  it('writes again itself when the write the hand-off started failed', async () => {
    let calls = 0;
    const { writes, ran, execute, handOff } = setUp(async () => {
      if (++calls === 1) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
    });
    handOff(event(5));
    await new Promise((r) => setImmediate(r));
    await expect(execute(carrying(event(5)))).resolves.toBe('done');
    expect(writes).toEqual([5, 5]);
    expect(ran).toHaveLength(1);
  });

  it('runs a retry of an activity whose writes it saw committed without writing them again, the database gone', async () => {
    let down = false;
    const { writes, ran, execute } = setUp(async () => {
      if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    await expect(execute(carrying(event(10), start))).resolves.toBe('done');
    down = true;
    await expect(execute(carrying(event(10), start))).resolves.toBe('done');
    expect(writes).toEqual(['start', 10]);
    expect(ran).toHaveLength(2);
    // What it did not see committed, it still writes first.
    await notWritten(execute(carrying(event(11))));
    expect(ran).toHaveLength(2);
  });

  it('fails at once, without running the activity, when the write fails; the message names the code, not the values', async () => {
    const { ran, execute } = setUp(async () => {
      throw Object.assign(new Error('duplicate key value (workflow_id)=(wf_secret_value)'), { code: '23505' });
    });
    const message = await notWritten(execute(carrying(event(6))));
    expect(message).toBe('transition 6 not written before the activity: 23505');
    expect(ran).toEqual([]);
  });

  it("keeps the projection's refusal, which names only the SQLSTATE", async () => {
    const { ran, execute } = setUp(async () => {
      throw ApplicationFailure.nonRetryable('the database refused to store transition 7 (SQLSTATE 22P05)', PROJECTION_REJECTED);
    });
    expect(await notWritten(execute(carrying(event(7))))).toBe(
      'transition 7 not written before the activity: the database refused to store transition 7 (SQLSTATE 22P05)',
    );
    expect(ran).toEqual([]);
  });

  it("gives up on a write that hangs after half the activity's start-to-close", async () => {
    const { ran, execute } = setUp(() => new Promise<void>(() => undefined), 200);
    expect(await notWritten(execute(carrying(event(8))))).toBe('transition 8 not written before the activity: no answer in 100 ms');
    expect(ran).toEqual([]);
  });

  it('leaves an activity that carries nothing as it is', async () => {
    const { writes, ran, execute } = setUp(async () => undefined);
    const args = [{ own: 'argument' }, { transition: event(9) }];
    await expect(execute({ args, headers: {} })).resolves.toBe('done');
    expect(writes).toEqual([]);
    expect(ran).toEqual([args]);
  });
});
