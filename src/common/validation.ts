import { Injectable, StandardSchemaValidationPipe } from '@nestjs/common';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { z } from 'zod';
import { fieldProblems } from '../../workflows/runtime/field-problems';
import { validationFailed } from './api-error';
import { refuseUnparsedBody } from './unparsed-body';

export { fieldProblems as zodProblems };

/**
 * Nest 12's Standard Schema pipe, validating a parameter against the zod schema named on its
 * decorator (`@Body({ schema })`, `@Query({ schema })`), with the API's own 422 body. The
 * override is needed because an exceptionFactory sees only the issues, and a field is reported
 * as "required" by looking at the value the request carried.
 */
@Injectable()
export class SchemaValidationPipe extends StandardSchemaValidationPipe {
  protected override async validate<T = unknown>(value: unknown, schema: StandardSchemaV1, options?: Record<string, unknown>) {
    refuseUnparsedBody(value);
    const result = await super.validate<T>(value, schema, options);
    // zod is the only schema library here: its Standard Schema issues are its own issue objects.
    if (result.issues) throw validationFailed(fieldProblems({ issues: result.issues as z.core.$ZodIssue[] }, value));
    return result;
  }
}
