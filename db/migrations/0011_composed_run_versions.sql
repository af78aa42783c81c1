-- A composed type's version is <N>.0, as a built-in type's is <major>.<minor>: runs of virtual.<uuid>@N registered before said N.
UPDATE "runs" SET "version" = "version" || '.0' WHERE "workflow_type" LIKE 'virtual.%' AND "version" ~ '^[0-9]+$';
