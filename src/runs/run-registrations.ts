import { isRefusedData } from '../../activities/database-errors';
import { projectRunsStarted } from '../../activities/projection';
import type { Database } from '../../db/client';
import type { RunStartedEvent } from '../../workflows/runtime/contract';

interface Waiting {
  event: RunStartedEvent;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Registers the runs the API starts, those started together in one statement (a group commit):
 * a registration arriving while one is being written waits for it, then goes with every other
 * that arrived meanwhile. A lone start is written at once, as before; under load the database
 * does one write per batch instead of one per start. No timer: nothing waits for a batch to fill.
 */
export class RunRegistrations {
  private waiting: Waiting[] = [];
  private writing = false;

  constructor(private readonly db: Database) {}

  projectRunStarted(event: RunStartedEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ event, resolve, reject });
      if (!this.writing) void this.writeAll();
    });
  }

  private async writeAll() {
    this.writing = true;
    while (this.waiting.length) {
      const batch = this.waiting;
      this.waiting = [];
      await this.write(batch);
    }
    this.writing = false;
  }

  /**
   * A batch the database refuses for its data is written again start by start, so that only the
   * start at fault fails; any other error (the database gone) is every caller's answer at once.
   */
  private async write(batch: Waiting[]) {
    try {
      await projectRunsStarted(this.db, batch.map((w) => w.event));
      for (const w of batch) w.resolve();
    } catch (err) {
      if (batch.length === 1 || !isRefusedData(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      for (const w of batch) await projectRunsStarted(this.db, [w.event]).then(w.resolve, w.reject);
    }
  }
}
