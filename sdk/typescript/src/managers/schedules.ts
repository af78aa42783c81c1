import type { Transport } from '../transport.js';
import type { Schedule, ScheduleInput, ScheduleTriggered } from '../types.js';

/** /schedules: runs started on a cron or an interval. */
export class SchedulesManager {
  constructor(private readonly transport: Transport) {}

  async create(input: ScheduleInput): Promise<Schedule> {
    return (await this.transport.request<Schedule>('/schedules', { method: 'POST', body: input, idempotent: false })).body;
  }

  /** Newest first. */
  async list(): Promise<Schedule[]> {
    return (await this.transport.request<{ schedules: Schedule[] }>('/schedules', { idempotent: true })).body.schedules;
  }

  async get(scheduleId: string): Promise<Schedule> {
    return (await this.transport.request<Schedule>(this.path(scheduleId), { idempotent: true })).body;
  }

  async delete(scheduleId: string): Promise<void> {
    await this.transport.request(this.path(scheduleId), { method: 'DELETE', idempotent: true });
  }

  async pause(scheduleId: string): Promise<Schedule> {
    return (await this.transport.request<Schedule>(`${this.path(scheduleId)}/pause`, { method: 'POST', idempotent: true })).body;
  }

  async unpause(scheduleId: string): Promise<Schedule> {
    return (await this.transport.request<Schedule>(`${this.path(scheduleId)}/unpause`, { method: 'POST', idempotent: true })).body;
  }

  /** Starts one run now, outside the schedule's times. */
  async trigger(scheduleId: string): Promise<ScheduleTriggered> {
    return (await this.transport.request<ScheduleTriggered>(`${this.path(scheduleId)}/trigger`, { method: 'POST', idempotent: false }))
      .body;
  }

  private path(scheduleId: string) {
    return `/schedules/${encodeURIComponent(scheduleId)}`;
  }
}
