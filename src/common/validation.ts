import { Injectable, StandardSchemaValidationPipe } from '@nestjs/common';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { z } from 'zod';
import { fieldProblems } from '../../workflows/runtime/field-problems';
import { pathKeys, walkJson } from '../../workflows/runtime/json-walk';
import { renderPath } from '../../workflows/runtime/storable-text';
import { validationFailed } from './api-error';
import { refuseUnparsedBody } from './unparsed-body';

export { fieldProblems as zodProblems };

/**
 * Nest 12's Standard Schema pipe, validating a parameter against the zod schema named on its
 * decorator (`@Body({ schema })`, `@Query({ schema })`), with the API's own 422 body. The
 * override is needed because an exceptionFactory sees only the issues, and a field is reported
 * as "required" by looking at the value the request carried.
 */
/** What Nest's pipe deletes before validating, as keys that could reach an object's prototype. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

@Injectable()
export class SchemaValidationPipe extends StandardSchemaValidationPipe {
  /**
   * Nest deletes these keys silently, so a strict schema never saw them and a value kept for the
   * caller (initial_data, a test_event) lost them: refused instead, naming the first.
   */
  protected override stripProtoKeys(value: unknown): void {
    const at = walkJson(value, (item) => (item.kind === 'key' && PROTOTYPE_KEYS.has(item.text) ? pathKeys(item.at) : undefined));
    if (!at) return;
    const message = 'is a key this API refuses anywhere: __proto__, constructor and prototype name what every object inherits';
    throw validationFailed([{ field: renderPath(at), rule: 'reserved_key', message }]);
  }

  protected override async validate<T = unknown>(value: unknown, schema: StandardSchemaV1, options?: Record<string, unknown>) {
    refuseUnparsedBody(value);
    const result = await super.validate<T>(value, schema, options);
    // zod is the only schema library here: its Standard Schema issues are its own issue objects.
    if (result.issues) throw validationFailed(fieldProblems({ issues: result.issues as z.core.$ZodIssue[] }, value));
    return result;
  }
}
