import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { findUnstorableText } from '../../workflows/runtime/storable-text';
import { validationFailed } from './api-error';

/**
 * Refuses text Postgres cannot store (a NUL character, a lone surrogate) anywhere in a route's
 * path parameters, query or JSON body, keys included, with a 422 naming the field, before any
 * handler can hand it to Postgres (which refuses it with a 500, or with a projection write that
 * fails forever). On the controllers whose input is stored or started as a run; the codec stores nothing.
 */
@Injectable()
export class StorableTextPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata) {
    if (metadata.type === 'custom') return value;
    const problem = findUnstorableText(value, metadata.data ? [metadata.data] : []);
    if (problem) throw validationFailed([problem]);
    return value;
  }
}
