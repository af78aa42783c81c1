import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

/**
 * Which limits a route counts against: starts and retries, the token-less webhook ingress, the
 * signed payments ingress (limited by its handler once it knows whether a delivery verified:
 * IngressLimiter), or reads (the rest).
 */
export type RequestKind = 'start' | 'ingress' | 'signed-ingress' | 'read';

/**
 * Marks a handler as a start (its own, lower limits) or as webhook ingress (limited per
 * endpoint, or by its handler). Read from the handler routing matched, not from the path, which
 * Express matches in any letter case and with a trailing slash.
 */
export const RequestLimit = Reflector.createDecorator<Exclude<RequestKind, 'read'>>();

const reflector = new Reflector();

export function requestKind(context: ExecutionContext): RequestKind {
  return reflector.get(RequestLimit, context.getHandler()) ?? 'read';
}
