import fs from 'node:fs';

interface Started {
  temporal: { stop(): Promise<void> };
  database?: { drop(): Promise<void> };
  esign: { close(): Promise<void> };
  esignPlatform?: { close(): Promise<void> };
  dbhost?: { close(): Promise<void> };
  stack: { stop(): Promise<void> };
  control: { close(): Promise<void> };
  workDir: string;
}

export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as Record<string, unknown>).__ENGINE_TEST__ as Started | undefined;
  if (!started) return;
  await started.stack.stop();
  await Promise.all([started.control.close(), started.esign.close(), started.esignPlatform?.close(), started.dbhost?.close(), started.temporal.stop()]);
  await started.database?.drop();
  if (!process.env.KEEP_TEST_DATA) fs.rmSync(started.workDir, { recursive: true, force: true });
}
