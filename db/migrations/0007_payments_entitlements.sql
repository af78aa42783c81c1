CREATE TABLE "entitlements" (
	"entitlement_uuid" text PRIMARY KEY NOT NULL,
	"organization_uuid" text NOT NULL,
	"subject" text NOT NULL,
	"source_event_id" text NOT NULL,
	"workflow_id" text NOT NULL,
	"event_type" text NOT NULL,
	"object_id" text,
	"event_metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"granted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payment_events" (
	"connection_uuid" text NOT NULL,
	"event_id" text NOT NULL,
	"organization_uuid" text NOT NULL,
	"workflow_id" text NOT NULL,
	"accepted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_events_connection_uuid_event_id_pk" PRIMARY KEY("connection_uuid","event_id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "entitlements_org_source_event_idx" ON "entitlements" USING btree ("organization_uuid","source_event_id");--> statement-breakpoint
CREATE INDEX "entitlements_org_granted_idx" ON "entitlements" USING btree ("organization_uuid","granted_at" DESC NULLS FIRST,"entitlement_uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "entitlements_org_subject_granted_idx" ON "entitlements" USING btree ("organization_uuid","subject","granted_at" DESC NULLS FIRST,"entitlement_uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "payment_events_connection_workflow_idx" ON "payment_events" USING btree ("connection_uuid","workflow_id");