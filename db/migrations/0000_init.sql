CREATE TABLE "api_tokens" (
	"token_id" text PRIMARY KEY NOT NULL,
	"organization_uuid" text NOT NULL,
	"token_hash" text NOT NULL,
	"username" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"organization_uuid" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"workflow_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_organization_uuid_key_pk" PRIMARY KEY("organization_uuid","key")
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"organization_uuid" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"workflow_id" text PRIMARY KEY NOT NULL,
	"organization_uuid" text NOT NULL,
	"workflow_type" text NOT NULL,
	"version" text NOT NULL,
	"state_name" text NOT NULL,
	"is_terminal" boolean DEFAULT false NOT NULL,
	"status" text NOT NULL,
	"attempt" integer DEFAULT 1 NOT NULL,
	"last_seq" integer DEFAULT 0 NOT NULL,
	"state_data" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transitions" (
	"workflow_id" text NOT NULL,
	"seq" integer NOT NULL,
	"from_state" text NOT NULL,
	"to_state" text NOT NULL,
	"action" text NOT NULL,
	"attempt" integer NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "transitions_workflow_id_seq_pk" PRIMARY KEY("workflow_id","seq")
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_organization_uuid_organizations_organization_uuid_fk" FOREIGN KEY ("organization_uuid") REFERENCES "public"."organizations"("organization_uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transitions" ADD CONSTRAINT "transitions_workflow_id_runs_workflow_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."runs"("workflow_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_tokens_org_idx" ON "api_tokens" USING btree ("organization_uuid");--> statement-breakpoint
CREATE INDEX "runs_org_created_idx" ON "runs" USING btree ("organization_uuid","created_at" DESC NULLS LAST,"workflow_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "runs_org_type_created_idx" ON "runs" USING btree ("organization_uuid","workflow_type","created_at" DESC NULLS LAST,"workflow_id" DESC NULLS LAST);