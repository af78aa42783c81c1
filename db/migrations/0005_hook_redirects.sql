CREATE TABLE "hook_endpoints" (
	"endpoint_uuid" text PRIMARY KEY NOT NULL,
	"organization_uuid" text NOT NULL,
	"name" text NOT NULL,
	"target_url" text NOT NULL,
	"secret_ciphertext" text NOT NULL,
	"key_id" text NOT NULL,
	"secret_source" text NOT NULL,
	"secret_ref" text,
	"state" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hook_events" (
	"event_uuid" text PRIMARY KEY NOT NULL,
	"endpoint_uuid" text NOT NULL,
	"organization_uuid" text NOT NULL,
	"body" text NOT NULL,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	"acknowledged_at" timestamp with time zone,
	"expired_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "hook_events" ADD CONSTRAINT "hook_events_endpoint_uuid_hook_endpoints_endpoint_uuid_fk" FOREIGN KEY ("endpoint_uuid") REFERENCES "public"."hook_endpoints"("endpoint_uuid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "hook_endpoints_org_name_idx" ON "hook_endpoints" USING btree ("organization_uuid","name");--> statement-breakpoint
CREATE INDEX "hook_events_endpoint_received_idx" ON "hook_events" USING btree ("endpoint_uuid","received_at" DESC NULLS FIRST,"event_uuid" DESC NULLS FIRST);