CREATE TABLE "composition_versions" (
	"composition_uuid" text NOT NULL,
	"version" integer NOT NULL,
	"name" text NOT NULL,
	"steps" jsonb NOT NULL,
	"plan" jsonb NOT NULL,
	"exposed_to_end_users" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "composition_versions_composition_uuid_version_pk" PRIMARY KEY("composition_uuid","version")
);
--> statement-breakpoint
CREATE TABLE "compositions" (
	"composition_uuid" text PRIMARY KEY NOT NULL,
	"organization_uuid" text NOT NULL,
	"latest_version" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "composition_versions" ADD CONSTRAINT "composition_versions_composition_uuid_compositions_composition_uuid_fk" FOREIGN KEY ("composition_uuid") REFERENCES "public"."compositions"("composition_uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "compositions_org_created_idx" ON "compositions" USING btree ("organization_uuid","created_at" DESC NULLS FIRST,"composition_uuid" DESC NULLS FIRST);