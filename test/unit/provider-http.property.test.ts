import { ApplicationFailure } from '@temporalio/common';
import fc from 'fast-check';
import { callProvider } from '../../activities/provider-http';
import { dispatcherFor } from '../support/outbound';

/**
 * Found by fuzzing: a token holding a character no HTTP header value may carry (line break, NUL)
 * made fetch throw `Headers.append: "Bearer <token>" is an invalid header value`, and that message
 * became the run's failure_reason, shown in clear in the API, the stream, the logs and Temporal.
 */
describe('callProvider failure messages', () => {
  it('never carry the bearer token, whatever the token holds', async () => {
    const target = 'http://127.0.0.1:9';
    const dispatcher = dispatcherFor([target]);
    const visible = fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom(...'abcXYZ0189-_.~+/='.split('')) });
    const token = fc.tuple(visible, fc.constantFrom('\n', '\r', '\0', '\r\n'), visible).map(([a, bad, b]) => `${a}${bad}${b}`);
    await fc.assert(
      fc.asyncProperty(token, async (bearer) => {
        const err = await callProvider(
          { allowHttpHosts: ['127.0.0.1'], timeoutMs: 2_000, dispatcher },
          // Nothing listens there; header validation fails before any connection anyway.
          { method: 'GET', url: `${target}/api/v2.1`, credential: { bearer, origin: target }, provider: 'e-signature API' },
        ).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ApplicationFailure);
        const failure = err as ApplicationFailure;
        expect(failure.message).not.toContain(bearer);
        expect(JSON.stringify(failure)).not.toContain(JSON.stringify(bearer).slice(1, -1));
      }),
      { numRuns: 50 * Number(process.env.FC_RUNS_FACTOR || 1) },
    );
  });
});
