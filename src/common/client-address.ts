import type { Request } from 'express';

/**
 * The address a request came from, as per-client limits key it: the TCP peer, or the client a
 * trusted proxy names in X-Forwarded-For when TRUST_PROXY says which proxies to believe.
 */
export const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';
