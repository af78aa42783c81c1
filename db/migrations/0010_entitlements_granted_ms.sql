-- Milliseconds, as the list's keyset cursor carries them: rows granted within one millisecond were skipped by the next page.
ALTER TABLE "entitlements" ALTER COLUMN "granted_at" SET DATA TYPE timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "entitlements" ALTER COLUMN "granted_at" SET DEFAULT now();
