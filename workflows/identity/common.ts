import { proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';
import type { IdentityActivities } from '../../activities/identity';

/** Database work only: retried briefly while the database is away, then the run fails. */
export const identity = proxyActivities<IdentityActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 10 },
});

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Where the login host may send a code: https anywhere, http on loopback only (native and
 * development apps, RFC 8252 §7.3), never a fragment (RFC 6749 §3.1.2). Kept exactly as given:
 * /authorize compares the string, with no normalisation.
 */
export function redirectUriProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (value.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must be https, or http on a loopback host (127.0.0.1, [::1], localhost)';
}

export const redirectUri = z
  .string()
  .max(2000)
  .superRefine((value, ctx) => {
    const problem = redirectUriProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const redirectUris = z.array(redirectUri).max(20);

export const clientKey = z.string().regex(/^ck_[A-Za-z0-9_-]{16,64}$/, 'must be a client_key (ck_…)');
