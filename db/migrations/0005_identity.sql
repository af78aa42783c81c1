CREATE TABLE "authorization_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"client_uuid" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"sid" text NOT NULL,
	"end_user_uuid" text NOT NULL,
	"nonce" text,
	"expires_at" timestamp with time zone NOT NULL,
	"redeemed_at" timestamp with time zone,
	"issued_jtis" jsonb DEFAULT '[]'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "end_user_email_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"end_user_uuid" text NOT NULL,
	"purpose" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "end_users" (
	"end_user_uuid" text PRIMARY KEY NOT NULL,
	"organization_uuid" text NOT NULL,
	"client_uuid" text NOT NULL,
	"email" text NOT NULL,
	"email_verified_at" timestamp with time zone,
	"password_hash" text NOT NULL,
	"totp_secret" text,
	"totp_confirmed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_apps" (
	"client_uuid" text PRIMARY KEY NOT NULL,
	"client_key" text NOT NULL,
	"organization_uuid" text NOT NULL,
	"name" text NOT NULL,
	"redirect_uris" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "identity_apps_client_key_unique" UNIQUE("client_key")
);
--> statement-breakpoint
CREATE TABLE "login_sessions" (
	"sid" text PRIMARY KEY NOT NULL,
	"end_user_uuid" text NOT NULL,
	"client_uuid" text NOT NULL,
	"organization_uuid" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "revoked_tokens" (
	"jti" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sign_in_throttle" (
	"key" text PRIMARY KEY NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"window_started_at" timestamp with time zone NOT NULL,
	"locked_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"private_jwk_ciphertext" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "end_user_uuid" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "client_uuid" text;--> statement-breakpoint
ALTER TABLE "end_user_email_tokens" ADD CONSTRAINT "end_user_email_tokens_end_user_uuid_end_users_end_user_uuid_fk" FOREIGN KEY ("end_user_uuid") REFERENCES "public"."end_users"("end_user_uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "end_users" ADD CONSTRAINT "end_users_client_uuid_identity_apps_client_uuid_fk" FOREIGN KEY ("client_uuid") REFERENCES "public"."identity_apps"("client_uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "login_sessions" ADD CONSTRAINT "login_sessions_end_user_uuid_end_users_end_user_uuid_fk" FOREIGN KEY ("end_user_uuid") REFERENCES "public"."end_users"("end_user_uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "end_user_email_tokens_end_user_idx" ON "end_user_email_tokens" USING btree ("end_user_uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "end_users_client_email_idx" ON "end_users" USING btree ("client_uuid","email");--> statement-breakpoint
CREATE INDEX "identity_apps_org_created_idx" ON "identity_apps" USING btree ("organization_uuid","created_at");--> statement-breakpoint
CREATE INDEX "login_sessions_end_user_idx" ON "login_sessions" USING btree ("end_user_uuid");--> statement-breakpoint
CREATE INDEX "runs_org_end_user_created_idx" ON "runs" USING btree ("organization_uuid","end_user_uuid","created_at" DESC NULLS FIRST,"workflow_id" DESC NULLS FIRST);