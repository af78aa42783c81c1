import { type Chunk, p50Of, ratioInterval, type Sample, sideBySide, throughputOf } from '../../bench/lib/stats';

const sample = (chunks: Chunk[]): Sample => ({
  label: 'side',
  latenciesMs: chunks.flatMap((c) => c.latenciesMs),
  wallMs: chunks.reduce((t, c) => t + c.wallMs, 0),
  chunks,
});

describe('bench ratioInterval (paired bootstrap over rounds)', () => {
  it('is a point when every round has the same ratio, however the rounds differ', () => {
    const baseline = sample([1, 3, 7, 2, 9, 4].map((x) => ({ latenciesMs: [x, x + 1, x + 2], wallMs: 10 * x })));
    const subject = sample(baseline.chunks!.map((c) => ({ latenciesMs: c.latenciesMs.map((x) => 1.5 * x), wallMs: 2 * c.wallMs })));
    expect(ratioInterval(subject, baseline, p50Of)).toEqual([1.5, 1.5]);
    expect(ratioInterval(subject, baseline, throughputOf)).toEqual([0.5, 0.5]);
  });

  it('pairs the rounds: a load that moves both sides alike does not widen it', () => {
    // Each round's load multiplies both sides' latencies; the subject is 1.2× its round's baseline.
    const loads = [1, 4, 1.5, 6, 2, 8, 1.2, 5];
    const baseline = sample(loads.map((l) => ({ latenciesMs: [5 * l], wallMs: 5 * l })));
    const subject = sample(loads.map((l) => ({ latenciesMs: [6 * l], wallMs: 6 * l })));
    expect(ratioInterval(subject, baseline, p50Of)).toEqual([1.2, 1.2]);
  });

  it('spans the rounds when their ratios differ, and holds the pooled ratio', () => {
    const ratios = [1.1, 1.3, 1.2, 1.5, 1.0, 1.25, 1.4, 1.15, 1.35, 1.05];
    const baseline = sample(ratios.map(() => ({ latenciesMs: [10, 10, 10], wallMs: 30 })));
    const subject = sample(ratios.map((r) => ({ latenciesMs: [10 * r, 10 * r, 10 * r], wallMs: 30 * r })));
    const [low, high] = ratioInterval(subject, baseline, p50Of);
    expect(low).toBeGreaterThanOrEqual(1.0);
    expect(high).toBeLessThanOrEqual(1.5);
    expect(high - low).toBeGreaterThan(0.05);
    expect(low).toBeLessThanOrEqual(1.25);
    expect(high).toBeGreaterThanOrEqual(1.2);
  });

  it('refuses samples without paired rounds', () => {
    const one = sample([{ latenciesMs: [1], wallMs: 1 }]);
    const two = sample([
      { latenciesMs: [1], wallMs: 1 },
      { latenciesMs: [2], wallMs: 2 },
    ]);
    expect(() => ratioInterval(one, one, p50Of)).toThrow(/2 rounds or more/);
    expect(() => ratioInterval(two, one, p50Of)).toThrow(/2 rounds or more/);
    expect(() => ratioInterval({ label: 'x', latenciesMs: [1], wallMs: 1 }, two, p50Of)).toThrow(/2 rounds or more/);
  });

  it('gets one chunk per side per round from sideBySide', async () => {
    const [a, b] = await sideBySide(
      [
        { label: 'a', task: async () => undefined },
        { label: 'b', task: async () => undefined },
      ],
      10,
      1,
      5,
    );
    expect(a.chunks?.map((c) => c.latenciesMs.length)).toEqual([2, 2, 2, 2, 2]);
    expect(b.chunks).toHaveLength(5);
    expect(a.latenciesMs).toHaveLength(10);
  });
});
