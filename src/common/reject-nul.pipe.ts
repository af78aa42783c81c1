import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { findNul, NUL_MESSAGE, NUL_RULE } from '../../workflows/runtime/nul';
import { validationFailed } from './api-error';

/**
 * Refuses a NUL character anywhere in a route's path parameters, query or JSON body with a 422
 * naming the field, before any handler can hand it to Postgres (which refuses it with a 500).
 * On the controllers whose input is stored or started as a run; the codec stores nothing.
 */
@Injectable()
export class RejectNulPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata) {
    if (metadata.type === 'custom') return value;
    const field = findNul(value, metadata.data ? [metadata.data] : []);
    if (field !== undefined) throw validationFailed([{ field, rule: NUL_RULE, message: NUL_MESSAGE }]);
    return value;
  }
}
