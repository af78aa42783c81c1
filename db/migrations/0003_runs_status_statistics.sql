-- A run's status follows from its state (failed → FAILED, completed → COMPLETED, others → RUNNING),
-- which the planner cannot know from per-column statistics: it would take a list filtered on both
-- for far rarer than it is and sort the rows of one filter's index instead of reading them in order.
-- drizzle-kit cannot express statistics objects in db/schema.ts, hence this hand-written migration.
CREATE STATISTICS "runs_status_state_name_stats" (dependencies) ON "status", "state_name" FROM "runs";
