import { REDACTED, type RunData } from './definition';

export function redact(data: RunData, secretFields: readonly string[]): RunData {
  if (!secretFields.length) return data;
  const out: RunData = { ...data };
  for (const field of secretFields) {
    if (out[field] !== undefined && out[field] !== null) out[field] = REDACTED;
  }
  return out;
}
