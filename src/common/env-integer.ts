/** An integer setting from the environment: `fallback` when unset or empty, else at least `min`, or startup fails naming it. */
export function envInteger(env: NodeJS.ProcessEnv, name: string, fallback: number, min: 0 | 1 = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a ${min === 0 ? 'non-negative' : 'positive'} integer, got "${raw}"`);
  return value;
}
