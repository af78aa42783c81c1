import { outboundUrlProblem, parseAllowHttpHosts } from '../../activities/outbound';

describe('outbound URL policy', () => {
  const allow = parseAllowHttpHosts(' 127.0.0.1, Sandbox.local:8080 ,');

  it('parses ALLOW_HTTP_HOSTS', () => {
    expect(allow).toEqual(['127.0.0.1', 'sandbox.local:8080']);
  });

  it.each([
    ['https://demo.example.com/restapi', undefined],
    ['http://127.0.0.1:4567/api', undefined],
    ['http://sandbox.local:8080/api', undefined],
    ['http://sandbox.local:9090/api', 'must use https'],
    ['http://example.com/api', 'must use https'],
    ['ftp://example.com/api', 'must use https'],
    ['https://user:pw@example.com/api', 'must not carry credentials'],
    ['not a url', 'must be an absolute URL'],
  ])('%s', (url, problem) => {
    const result = outboundUrlProblem(url, allow);
    if (problem) expect(result).toContain(problem);
    else expect(result).toBeUndefined();
  });
});
