DROP INDEX "runs_org_created_idx";--> statement-breakpoint
DROP INDEX "runs_org_type_created_idx";--> statement-breakpoint
CREATE INDEX "runs_org_status_created_idx" ON "runs" USING btree ("organization_uuid","status","created_at" DESC NULLS FIRST,"workflow_id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "runs_org_state_created_idx" ON "runs" USING btree ("organization_uuid","state_name","created_at" DESC NULLS FIRST,"workflow_id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "runs_org_created_idx" ON "runs" USING btree ("organization_uuid","created_at" DESC NULLS FIRST,"workflow_id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "runs_org_type_created_idx" ON "runs" USING btree ("organization_uuid","workflow_type","created_at" DESC NULLS FIRST,"workflow_id" DESC NULLS FIRST);