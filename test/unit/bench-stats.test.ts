import { blockRatioInterval, type Chunk, p50Of, percentile, pooled, ratioInterval, type Sample, sideBySide, throughputOf } from '../../bench/lib/stats';

const sample = (chunks: Chunk[]): Sample => ({ label: 'side', ...pooled(chunks), chunks });

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

describe('bench blockRatioInterval (each sample resampled by whole blocks)', () => {
  const p99 = (values: number[]) => percentile(values, 99);
  const blocks = (count: number, size: number, value: (block: number, i: number) => number) =>
    Array.from({ length: count }, (_, b) => Array.from({ length: size }, (_, i) => value(b, i)));

  it('is a point when every block of each sample is alike', () => {
    const baseline = blocks(20, 50, (_, i) => 1 + i / 10);
    const subject = blocks(10, 500, (_, i) => 2 * (1 + (i % 50) / 10));
    expect(blockRatioInterval(subject, baseline, p99)).toEqual([2, 2]);
  });

  it('widens with one slow second in the baseline, which a p99 of its values rests on or not', () => {
    // 20 seconds of 50 deliveries at 1 ms, one of them at 10 ms: the baseline's p99 is 10 ms when
    // the draw takes that second and 1 ms when it does not.
    const baseline = blocks(20, 50, (b) => (b === 7 ? 10 : 1));
    const subject = blocks(20, 50, () => 2);
    const [low, high] = blockRatioInterval(subject, baseline, p99);
    expect(low).toBe(0.2);
    expect(high).toBe(2);
  });

  it('refuses a sample of fewer than 2 blocks', () => {
    expect(() => blockRatioInterval([[1, 2]], [[1], [2]], p99)).toThrow(/2 or more/);
  });
});
