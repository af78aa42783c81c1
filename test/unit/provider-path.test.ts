import { ApplicationFailure } from '@temporalio/common';
import { providerUrl } from '../../activities/provider-path';

describe('providerUrl: no dot segment reaches a provider', () => {
  it('joins the API root and the path, the root without its trailing slashes', () => {
    expect(providerUrl('https://esign.example.com/api/', '/v2.1/accounts/4711/users/u-1/authorization/a_2')).toBe(
      'https://esign.example.com/api/v2.1/accounts/4711/users/u-1/authorization/a_2',
    );
    // Dots inside a segment are no dot segment: a dbhost id may hold them.
    expect(providerUrl('https://db.example.com', '/api/v2/projects/a..b/operations/.x.')).toBe('https://db.example.com/api/v2/projects/a..b/operations/.x.');
  });

  it.each([
    ['..', '/v2.1/accounts/4711/users/../authorization/..'],
    ['.', '/v2.1/accounts/4711/users/./authorization/r204'],
    ['%2e%2E', '/v2.1/accounts/4711/users/%2e%2E/authorization/a'],
    ['.%2e', '/v2.1/accounts/4711/users/u/authorization/.%2e'],
    ['%2E', '/api/v2/projects/%2E/endpoints'],
    ['..', '/api/v2/projects/p\\..\\x/endpoints'],
    ['..', '/api/v2/projects/p/operations/..?x=1'],
  ])('refuses the dot segment "%s" for good, as invalid_input: %s', (dot, path) => {
    let thrown: unknown;
    try {
      providerUrl('https://esign.example.com/api', path);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({ type: 'invalid_input', nonRetryable: true });
    expect((thrown as Error).message).toContain(`"${dot}"`);
  });
});
