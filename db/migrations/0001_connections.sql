CREATE TABLE "connections" (
	"connection_uuid" text PRIMARY KEY NOT NULL,
	"organization_uuid" text NOT NULL,
	"plugin" text NOT NULL,
	"name" text NOT NULL,
	"secrets_ciphertext" text NOT NULL,
	"key_id" text NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "connections_org_name_idx" ON "connections" USING btree ("organization_uuid","name");