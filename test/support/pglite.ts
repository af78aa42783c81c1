import { type DatabaseHandle, openDatabase } from '../../db/client';

/** A fresh in-process PGlite with every migration applied: the embedded default, whatever DATABASE_URL says. */
export async function openMigratedPglite(): Promise<DatabaseHandle> {
  const database = await openDatabase({});
  await database.migrate();
  return database;
}
