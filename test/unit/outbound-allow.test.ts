import { destinationRefusal, parseOutboundAllow } from '../../activities/outbound-allow';

describe('OUTBOUND_ALLOW', () => {
  it('parses hosts, host:port, [IPv6]:port, bare IPv6 and CIDR ranges, canonical as fetch parses URLs', () => {
    const allow = parseOutboundAllow(' Esign.Corp.Example ,db.corp.example:8443, 10.1.0.0/16,[fd00::5]:443, fd00::6 ,0x7f.1:4000,,');
    expect(allow).toHaveLength(6);
    expect(allow[0]).toEqual({ name: 'esign.corp.example', port: undefined });
    expect(allow[1]).toEqual({ name: 'db.corp.example', port: 8443 });
    expect(allow[2]).toMatchObject({ range: [expect.anything(), 16] });
    expect(String((allow[2] as { range: [unknown, number] }).range[0])).toBe('10.1.0.0');
    expect(allow[3]).toMatchObject({ range: [expect.anything(), 128], port: 443 });
    expect(allow[4]).toMatchObject({ range: [expect.anything(), 128] });
    // 0x7f.1 is how the URL parser spells 127.0.0.1 in another form: the entry means that address.
    expect(String((allow[5] as { range: [unknown, number] }).range[0])).toBe('127.0.0.1');
    expect(allow[5]).toMatchObject({ range: [expect.anything(), 32], port: 4000 });
  });

  it('is empty when unset: nothing inward is allowed by default', () => {
    expect(parseOutboundAllow(undefined)).toEqual([]);
    expect(parseOutboundAllow('')).toEqual([]);
    expect(destinationRefusal([], { host: '127.0.0.1', address: '127.0.0.1', port: 3000 })).toBeDefined();
  });

  it.each([['10.0.0.0/33'], ['host:0'], ['host:70000'], ['user@host'], ['http://host'], ['host/path'], ['[::1'], ['[nope]:80'], ['a b']])(
    'refuses the entry %j at start, naming it',
    (entry) => {
      expect(() => parseOutboundAllow(`ok.example,${entry}`)).toThrow(`OUTBOUND_ALLOW: "${entry}" is not a host, host:port, [IPv6]:port or CIDR range`);
    },
  );

  const allow = parseOutboundAllow('esign.corp.example,db.corp.example:8443,10.1.0.0/16,127.0.0.1:4000,[::1]:4001,fd00::/8');
  const refused = (host: string, address: string, port: number) => destinationRefusal(allow, { host, address, port });

  it('lets public addresses through whatever the list holds', () => {
    expect(refused('provider.example', '93.184.215.14', 443)).toBeUndefined();
    expect(refused('93.184.215.14', '93.184.215.14', 8080)).toBeUndefined();
  });

  it('a name entry allows that name, on any port or on its own port, whatever it resolves to', () => {
    expect(refused('esign.corp.example', '10.9.9.9', 443)).toBeUndefined();
    expect(refused('esign.corp.example', '10.9.9.9', 22)).toBeUndefined();
    expect(refused('db.corp.example', '192.168.1.5', 8443)).toBeUndefined();
    expect(refused('db.corp.example', '192.168.1.5', 443)).toBe('db.corp.example resolves to a non-public address (private) not in OUTBOUND_ALLOW');
    expect(refused('other.corp.example', '10.9.9.9', 443)).toBe('other.corp.example resolves to a non-public address (private) not in OUTBOUND_ALLOW');
  });

  it('an address or range entry allows that address, under any name that resolves to it', () => {
    expect(refused('10.1.2.3', '10.1.2.3', 443)).toBeUndefined();
    expect(refused('anything.internal', '10.1.2.3', 443)).toBeUndefined();
    expect(refused('10.2.0.1', '10.2.0.1', 443)).toBe('10.2.0.1 is a non-public address (private) not in OUTBOUND_ALLOW');
    expect(refused('fd00::1', 'fd00::1', 443)).toBeUndefined();
    expect(refused('fc00::1', 'fc00::1', 443)).toBe('fc00::1 is a non-public address (unique-local) not in OUTBOUND_ALLOW');
  });

  it('a host:port entry allows that port only, in the IPv4-mapped spelling too', () => {
    expect(refused('127.0.0.1', '127.0.0.1', 4000)).toBeUndefined();
    expect(refused('::ffff:7f00:1', '::ffff:7f00:1', 4000)).toBeUndefined();
    expect(refused('127.0.0.1', '127.0.0.1', 4001)).toBe('127.0.0.1 is a non-public address (loopback) not in OUTBOUND_ALLOW');
    expect(refused('::1', '::1', 4001)).toBeUndefined();
    expect(refused('::1', '::1', 4000)).toBe('::1 is a non-public address (loopback) not in OUTBOUND_ALLOW');
  });

  it('names the host and the range in a refusal, never the address a name resolved to', () => {
    const message = refused('inward.example', '169.254.169.254', 443);
    expect(message).toBe('inward.example resolves to a non-public address (link-local) not in OUTBOUND_ALLOW');
    expect(message).not.toContain('169.254');
  });
});
