import { backoffMs } from '../../sdk/typescript/src/backoff';
import { parseData, parseStatus, UsageError } from '../../sdk/typescript/src/cli/input';
import {
  AuthenticationError,
  ConflictError,
  errorFromResponse,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServiceUnavailableError,
  ValidationError,
  WorkflowEngineError,
  WorkflowFailedError,
} from '../../sdk/typescript/src/errors';
import { bindingPath, bindingTree, typeName } from '../../sdk/typescript/src/generate/names';
import { toRunEvent } from '../../sdk/typescript/src/run-event';

const body = (code: string, details: unknown = null) => JSON.stringify({ error: { code, message: `${code} happened`, details } });

describe('SDK error mapping', () => {
  it.each([
    [401, AuthenticationError],
    [403, PermissionError],
    [404, NotFoundError],
    [409, ConflictError],
    [400, ValidationError],
    [413, ValidationError],
    [415, ValidationError],
    [422, ValidationError],
    [429, RateLimitError],
    [503, ServiceUnavailableError],
  ])('%i → %p, carrying code, status and details', (status, ErrorClass) => {
    const err = errorFromResponse(status, body('some_code', [{ field: 'f', rule: 'r', message: 'm' }]));
    expect(err).toBeInstanceOf(ErrorClass);
    expect(err).toBeInstanceOf(WorkflowEngineError);
    expect(err).toMatchObject({
      status,
      code: 'some_code',
      message: 'some_code happened',
      details: [{ field: 'f', rule: 'r', message: 'm' }],
    });
    // As the Python SDK's APIError.fields: any error whose details name fields lists them.
    expect(err.fields).toEqual([{ field: 'f', rule: 'r', message: 'm' }]);
    expect(errorFromResponse(status, body('some_code', { parent_workflow_id: 'wf_p' })).fields).toEqual([]);
  });

  it('a body that is not the API error body keeps its text and a code from the status', () => {
    const err = errorFromResponse(502, '<html>bad gateway</html>');
    expect(err.constructor).toBe(WorkflowEngineError);
    expect(err).toMatchObject({ status: 502, code: 'http_502', message: '<html>bad gateway</html>' });
  });

  it('Retry-After in seconds or as a date', () => {
    const inSeconds = errorFromResponse(429, body('rate_limited'), new Headers({ 'retry-after': '7' })) as RateLimitError;
    expect(inSeconds.retryAfter).toBe(7);
    const date = new Date(Date.now() + 10_000).toUTCString();
    const asDate = errorFromResponse(503, body('database_unavailable'), new Headers({ 'retry-after': date })) as ServiceUnavailableError;
    expect(asDate.retryAfter).toBeGreaterThan(8);
    expect(asDate.retryAfter).toBeLessThanOrEqual(10);
  });
});

describe('binding names', () => {
  it('maps workflow types to camelCase paths and PascalCase type names', () => {
    expect(bindingPath('esign.resources.get-resource-information')).toEqual(['esign', 'resources', 'getResourceInformation']);
    expect(typeName('esign.resources.get-resource-information')).toBe('EsignResourcesGetResourceInformation');
    expect(bindingPath('acme.2fa.send_code')).toEqual(['acme', '_2fa', 'sendCode']);
  });

  it('type names are already in the form json-schema-to-typescript declares them', () => {
    expect(typeName('virtual.daaa9a67-a790-4301-b761-5ab20dd21002@1')).toBe('VirtualDaaa9A67A7904301B7615Ab20Dd210021');
    expect(typeName('acme.2fa.send_code')).toBe('Acme2FaSendCode');
    expect(typeName('3d.render')).toBe('_3DRender');
  });

  it('nests types by namespace and refuses a type that is also a namespace', () => {
    expect(bindingTree(['a.b.c-d', 'a.e'])).toEqual({ a: { b: { cD: 'a.b.c-d' }, e: 'a.e' } });
    expect(() => bindingTree(['a.b', 'a.b.c'])).toThrow(/namespace/);
    expect(() => bindingTree(['a.b-c', 'a.b_c'])).toThrow(/collide/);
  });
});

describe('stream events', () => {
  it("a failed run's fields are its failure fields, failure_type included, as the Python SDK's", () => {
    const failed = toRunEvent({
      event: 'failed',
      data: '{"state_name":"FAILED","error":{"message":"boom","failure_reason":"boom","failure_type":"unauthorized"},"state_data":{}}',
    });
    if (failed?.type !== 'failed') throw new Error('not a failed event');
    const err = new WorkflowFailedError('wf_1', failed.error, failed.stateData);
    expect(err.fields).toEqual({ failure_reason: 'boom', failure_type: 'unauthorized' });
    expect(err.failureType).toBe('unauthorized');
  });

  it('maps transition, completed and failed; unknown events are skipped', () => {
    expect(toRunEvent({ event: 'transition', data: '{"seq":2,"from":"A","to":"B","action":"go","at":"t"}' })).toEqual({
      type: 'transition',
      seq: 2,
      from: 'A',
      to: 'B',
      action: 'go',
      at: 't',
    });
    expect(toRunEvent({ event: 'completed', data: '{"state_name":"COMPLETED","state_data":{"x":1}}' })).toEqual({
      type: 'completed',
      stateName: 'COMPLETED',
      stateData: { x: 1 },
    });
    const failed = toRunEvent({
      event: 'failed',
      data: '{"state_name":"FAILED","error":{"message":"boom","failure_type":"unauthorized","failed_step":"execute"},"state_data":{"y":2}}',
    });
    expect(failed).toEqual({
      type: 'failed',
      stateName: 'FAILED',
      error: { message: 'boom', failureType: 'unauthorized', fields: { failure_type: 'unauthorized', failed_step: 'execute' } },
      stateData: { y: 2 },
    });
    expect(toRunEvent({ event: 'future', data: '{}' })).toBeUndefined();
  });
});

describe('CLI input', () => {
  it('--data takes JSON or @file, and refuses anything but an object', () => {
    expect(parseData('{"a":1}')).toEqual({ a: 1 });
    expect(parseData('@in.json', (p) => (p === 'in.json' ? '{"b":2}' : ''))).toEqual({ b: 2 });
    expect(() => parseData('[1]')).toThrow(UsageError);
    expect(() => parseData('{nope')).toThrow(/not JSON/);
    expect(() =>
      parseData('@missing.json', () => {
        throw new Error('ENOENT');
      }),
    ).toThrow(/cannot read missing.json/);
  });

  it('--status is case-insensitive and closed', () => {
    expect(parseStatus('failed')).toBe('FAILED');
    expect(() => parseStatus('SLEEPING')).toThrow(UsageError);
  });
});

describe('backoff', () => {
  it('doubles from 0.5 s with jitter, capped at 8 s', () => {
    expect(backoffMs(0, () => 1)).toBe(500);
    expect(backoffMs(0, () => 0)).toBe(250);
    expect(backoffMs(3, () => 1)).toBe(4_000);
    expect(backoffMs(10, () => 1)).toBe(8_000);
  });
});
