DROP INDEX "runs_org_schedule_created_idx";--> statement-breakpoint
DROP INDEX "runs_org_end_user_created_idx";--> statement-breakpoint
CREATE INDEX "runs_org_schedule_created_idx" ON "runs" USING btree ("organization_uuid","schedule_id","created_at" DESC NULLS FIRST,"workflow_id" DESC NULLS FIRST) WHERE "runs"."schedule_id" is not null;--> statement-breakpoint
CREATE INDEX "runs_org_end_user_created_idx" ON "runs" USING btree ("organization_uuid","end_user_uuid","created_at" DESC NULLS FIRST,"workflow_id" DESC NULLS FIRST) WHERE "runs"."end_user_uuid" is not null;