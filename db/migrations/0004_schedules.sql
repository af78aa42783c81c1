CREATE TABLE "schedules" (
	"schedule_id" text PRIMARY KEY NOT NULL,
	"organization_uuid" text NOT NULL,
	"workflow_type" text NOT NULL,
	"initial_data" jsonb NOT NULL,
	"cron" text,
	"interval_seconds" integer,
	"timezone" text NOT NULL,
	"overlap" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "schedule_id" text;--> statement-breakpoint
CREATE INDEX "schedules_org_created_idx" ON "schedules" USING btree ("organization_uuid","created_at" DESC NULLS FIRST,"schedule_id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "runs_org_schedule_created_idx" ON "runs" USING btree ("organization_uuid","schedule_id","created_at" DESC NULLS FIRST,"workflow_id" DESC NULLS FIRST);