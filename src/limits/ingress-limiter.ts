import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, normalizeIp, type ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { clientAddress } from '../common/client-address';
import { CONFIG } from '../common/di';
import type { AppConfig } from '../config';
import { rateLimited } from './access.guard';

const MINUTE_MS = 60_000;

/**
 * The limits of the signed payments ingress, whose signature is its only authentication: counted
 * after verification, in the guard's windows (same storage, same 429). A verified delivery
 * spends its connection's budget; a refused request (unsigned, forged, stale, an unknown
 * connection) spends its client address's, so junk cannot use up the budget of the genuine
 * deliveries to a connection.
 */
@Injectable()
export class IngressLimiter {
  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  verified(connectionUuid: string, res: Response): Promise<void> {
    return this.spend('ingress-endpoint', connectionUuid.toLowerCase(), this.config.limits.ingressPerMinuteEndpoint, res);
  }

  /** Per address as the guard's default tracker counts it: an IPv6 client by its /64, which it can fill with addresses. */
  refused(req: Request, res: Response): Promise<void> {
    return this.spend('ingress-refused-client', normalizeIp(clientAddress(req)), this.config.limits.ingressRefusedPerMinuteClient, res);
  }

  private async spend(name: string, tracker: string, limit: number, res: Response): Promise<void> {
    if (limit === 0) return;
    const key = `${name}:${tracker}`;
    const hit = await this.storage.increment(key, MINUTE_MS, limit, MINUTE_MS, name);
    if (hit.isBlocked) throw rateLimited({ key, limit, ttl: MINUTE_MS, timeToBlockExpire: hit.timeToBlockExpire });
    res.setHeader(`X-RateLimit-Limit-${name}`, limit);
    res.setHeader(`X-RateLimit-Remaining-${name}`, Math.max(0, limit - hit.totalHits));
    res.setHeader(`X-RateLimit-Reset-${name}`, hit.timeToExpire);
  }
}
