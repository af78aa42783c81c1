import { literalAddressProblem, outboundUrlProblem, parseAllowHttpHosts } from '../../activities/outbound';
import { parseOutboundAllow } from '../../activities/outbound-allow';

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

describe('address literals at start', () => {
  const allow = parseOutboundAllow('127.0.0.1:4567,10.1.0.0/16');

  it.each([
    ['https://127.0.0.1/api', '127.0.0.1 is a non-public address (loopback) not in OUTBOUND_ALLOW'],
    ['http://127.0.0.1:4568/api', '127.0.0.1 is a non-public address (loopback) not in OUTBOUND_ALLOW'],
    ['https://2130706433/api', '127.0.0.1 is a non-public address (loopback) not in OUTBOUND_ALLOW'],
    ['https://[::ffff:127.0.0.1]/api', '::ffff:7f00:1 is a non-public address (loopback) not in OUTBOUND_ALLOW'],
    ['https://[64:ff9b::a9fe:a9fe]/api', '64:ff9b::a9fe:a9fe is a non-public address (link-local, IPv4 in IPv6) not in OUTBOUND_ALLOW'],
    ['https://10.2.0.1/api', '10.2.0.1 is a non-public address (private) not in OUTBOUND_ALLOW'],
  ])('%s is refused', (url, problem) => {
    expect(literalAddressProblem(url, allow)).toBe(problem);
  });

  it.each([
    ['http://127.0.0.1:4567/api', 'the exact host:port is allowed'],
    ['https://10.1.4.4/api', 'inside an allowed range'],
    ['https://93.184.215.14/api', 'a public address'],
    ['https://localhost/api', 'a name: checked by the worker when it connects'],
    ['https://esign.example.com/api', 'a name'],
    ['not a url', 'not a URL: outboundUrlProblem says so'],
  ])('%s passes (%s)', (url) => {
    expect(literalAddressProblem(url, allow)).toBeUndefined();
  });
});
