import { z } from 'zod';
import { ApiError } from '../../src/common/api-error';
import { SchemaValidationPipe, zodProblems } from '../../src/common/validation';
import { requestHash } from '../../src/runs/run-ids';
import { findPlugin } from '../../src/plugins/plugins';
import { findDefinition } from '../../workflows/registry';

describe('validation errors', () => {
  const del = findDefinition('esign.authorizations.delete-user-authorization')!;

  it('names every failing field with its rule', () => {
    const input = { base_url: 'https://x.example.com/nope', accountid: 'abc', surprise: 1 };
    const result = del.input.safeParse(input);
    expect(result.success).toBe(false);
    const problems = zodProblems(result.error!, input, 'initial_data');
    const byField = Object.fromEntries(problems.map((p) => [p.field, p.rule]));
    expect(byField).toEqual({
      'initial_data.base_url': 'api_root',
      'initial_data.accountid': 'format:regex',
      'initial_data.authorizationid': 'required',
      'initial_data.userid': 'required',
      'initial_data.surprise': 'unknown_field',
    });
  });

  it.each([
    ['..', '..', ['authorizationid', 'userid']],
    ['.', 'r204', ['userid']],
    ['u/../x', 'a', ['userid']],
    ['u', '%2e%2e', ['authorizationid']],
    ['u', 'a b', ['authorizationid']],
  ])('refuses provider ids that are no e-signature id (userid %j, authorizationid %j): format:regex', (userid, authorizationid, bad) => {
    const input = { base_url: 'https://esign.example.com/api', accountid: '4711', userid, authorizationid };
    const result = del.input.safeParse(input);
    expect(result.success).toBe(false);
    const problems = zodProblems(result.error!, input, 'initial_data');
    const message = "must be a provider id: 1-100 letters, digits, '-' or '_'";
    expect(problems).toEqual(bad.map((field) => ({ field: `initial_data.${field}`, rule: 'format:regex', message })));
  });

  it('takes the provider\'s GUIDs and the ids the doubles use', () => {
    const input = { base_url: 'https://esign.example.com/api', accountid: '4711', userid: '8f2b3c4d-1e2f-4a5b-9c8d-7e6f5a4b3c2d', authorizationid: 'ok-m3x9k_2' };
    expect(del.input.safeParse(input).success).toBe(true);
  });

  it.each(['http://127.0.0.1:4713/api?x=1', 'https://esign.example.com/api#f', 'https://u:p@esign.example.com/api', 'https://esign.example.com/v2'])(
    'a base_url that is a URL but no API root (%s) breaks the rule api_root, in a start and in an esign connection',
    (baseUrl) => {
      const input = { base_url: baseUrl, accountid: '4711', userid: 'u', authorizationid: 'a' };
      const result = del.input.safeParse(input);
      expect(zodProblems(result.error!, input, 'initial_data')).toEqual([
        { field: 'initial_data.base_url', rule: 'api_root', message: 'must be an API root of the form https://<host>/api (no query, fragment or credentials)' },
      ]);
      const config = { base_url: baseUrl };
      const connection = findPlugin('esign')!.config.safeParse(config);
      expect(zodProblems(connection.error!, config, 'config')).toEqual([expect.objectContaining({ field: 'config.base_url', rule: 'api_root' })]);
    },
  );

  it.each(['https://dbhost.example.com/?a=1', 'https://dbhost.example.com/#f', 'https://u:p@dbhost.example.com'])('a dbhost api_url with a query, fragment or credentials (%s) breaks the rule api_root', (apiUrl) => {
    const config = { api_url: apiUrl };
    const result = findPlugin('dbhost')!.config.safeParse(config);
    expect(zodProblems(result.error!, config, 'config')).toEqual([
      { field: 'config.api_url', rule: 'api_root', message: 'must be an API root without query, fragment or credentials' },
    ]);
  });

  it.each(['bad\ntoken', 'bad\r\nX-Injected: 1', 'tok\u0100en', 'two words', 'caf\u00e9'])(
    'an api_token no HTTP header carries as given (%j) is refused at start and in a connection: format:regex',
    (token) => {
      const message = 'must be visible ASCII (no space, line break or character above U+007E): it is sent in an HTTP header';
      const input = { base_url: 'https://esign.example.com/api', api_token: token, accountid: '4711', userid: 'u', authorizationid: 'a' };
      expect(zodProblems(del.input.safeParse(input).error!, input, 'initial_data')).toEqual([{ field: 'initial_data.api_token', rule: 'format:regex', message }]);
      for (const plugin of ['esign', 'dbhost']) {
        const secrets = { api_token: token };
        expect(zodProblems(findPlugin(plugin)!.secrets.safeParse(secrets).error!, secrets, 'secrets')).toEqual([{ field: 'secrets.api_token', rule: 'format:regex', message }]);
      }
    },
  );

  it('calls a missing field required even when its schema words the error itself', () => {
    const result = del.input.safeParse({});
    const problems = zodProblems(result.error!, {}, 'initial_data');
    expect(problems.find((p) => p.field === 'initial_data.base_url')).toEqual({ field: 'initial_data.base_url', rule: 'required', message: 'is required' });
  });

  it('rejects a base_url that is not a URL without throwing', () => {
    const result = del.input.safeParse({ base_url: 'nope', accountid: '1', authorizationid: 'a', userid: 'u' });
    expect(result.success).toBe(false);
    expect(zodProblems(result.error!, {}, 'initial_data').map((p) => p.field)).toContain('initial_data.base_url');
  });

  it('the schema pipe raises a 422 ApiError naming each field, rule and message', async () => {
    const schema = z.strictObject({ limit: z.number().int().max(100), name: z.string() });
    const error = await new SchemaValidationPipe()
      .transform({ limit: 1000, extra: 1 }, { type: 'body', schema })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(422);
    expect((error as ApiError).details).toEqual(
      expect.arrayContaining([
        { field: 'limit', rule: 'maximum', message: expect.any(String) },
        { field: 'name', rule: 'required', message: 'is required' },
        { field: 'extra', rule: 'unknown_field', message: 'is not a field of this schema' },
      ]),
    );
  });

  it('the schema pipe returns the parsed value (defaults applied) and ignores parameters without a schema', async () => {
    const schema = z.strictObject({ limit: z.coerce.number().default(50) });
    const pipe = new SchemaValidationPipe();
    await expect(pipe.transform({}, { type: 'query', schema })).resolves.toEqual({ limit: 50 });
    await expect(pipe.transform({ anything: 1 }, { type: 'body' })).resolves.toEqual({ anything: 1 });
  });
});

describe('requestHash', () => {
  it('ignores key order and undefined values but not content', () => {
    const a = requestHash({ workflow_type: 't', initial_data: { x: 1, y: [1, { b: 2, a: 1 }] } });
    const b = requestHash({ initial_data: { y: [1, { a: 1, b: 2 }], x: 1, z: undefined }, workflow_type: 't' });
    const c = requestHash({ workflow_type: 't', initial_data: { x: 2, y: [1, { a: 1, b: 2 }] } });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });
});
