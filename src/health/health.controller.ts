import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { DatabaseHandle } from '../../db/client';
import { Public } from '../auth/principal';
import { DATABASE, TEMPORAL_CLIENTS } from '../common/di';
import type { TemporalClients } from '../temporal-clients';

const CHECK_TIMEOUT_MS = 3_000;

async function check(probe: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

@Controller('health')
export class HealthController {
  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(TEMPORAL_CLIENTS) private readonly temporal: TemporalClients,
  ) {}

  @Public()
  @Get()
  async health(@Res({ passthrough: true }) res: Response) {
    const [database, temporal] = await Promise.all([
      check(() => this.database.ping()),
      check(() => this.temporal.connection.healthService.check({})),
    ]);
    const ok = database === 'ok' && temporal === 'ok';
    res.status(ok ? 200 : 503);
    if (ok) return { status: 'ok', temporal, database };
    const down = [temporal !== 'ok' && 'temporal', database !== 'ok' && 'database'].filter(Boolean).join(' and ');
    return { status: 'unavailable', temporal, database, error: { code: 'unavailable', message: `${down} not answering`, details: null } };
  }
}
