import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { reservedRange } from '../../src/infra/outbound/addresses.js';
import { destinationRule, isLocalName } from '../../src/infra/outbound/destination.js';

/**
 * The one blocklist of server-side requests (src/infra/outbound/addresses.ts):
 * every IANA special-purpose range, the edges just inside and just outside,
 * IPv4 embedded in IPv6, and the spellings a URL or getaddrinfo accepts.
 */
const refused: [address: string, range: RegExp][] = [
  // IPv4 special-purpose registry, first and last address of each
  ['0.0.0.0', /this network/], ['0.255.255.255', /this network/],
  ['10.0.0.0', /private-use/], ['10.255.255.255', /private-use/],
  ['100.64.0.0', /shared address/], ['100.127.255.255', /shared address/],
  ['127.0.0.1', /loopback/], ['127.255.255.255', /loopback/],
  ['169.254.0.0', /link-local/], ['169.254.169.254', /link-local/], ['169.254.255.255', /link-local/],
  ['172.16.0.0', /private-use/], ['172.31.255.255', /private-use/],
  ['192.0.0.0', /IETF protocol/], ['192.0.0.170', /IETF protocol/], ['192.0.0.255', /IETF protocol/],
  ['192.0.2.1', /TEST-NET-1/], ['192.31.196.1', /AS112/], ['192.52.193.1', /AMT/], ['192.88.99.1', /6to4 relay/],
  ['192.168.0.0', /private-use/], ['192.168.255.255', /private-use/], ['192.175.48.1', /AS112/],
  ['198.18.0.0', /benchmarking/], ['198.19.255.255', /benchmarking/],
  ['198.51.100.7', /TEST-NET-2/], ['203.0.113.7', /TEST-NET-3/],
  ['224.0.0.1', /multicast/], ['239.255.255.255', /multicast/],
  ['240.0.0.1', /reserved/], ['255.255.255.255', /reserved|broadcast/],
  // IPv6 special-purpose registry
  ['::', /unspecified/], ['::1', /loopback/],
  ['100::1', /discard/], ['100::ffff:ffff:ffff:ffff', /discard/], ['100:0:0:1::1', /dummy/],
  ['2001:2::1', /IETF protocol/], ['2001:1::1', /IETF protocol/], ['2001:1ff:ffff::1', /IETF protocol/], ['2001:20::1', /IETF protocol/],
  ['2001:db8::1', /documentation/], ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', /documentation/],
  ['2620:4f:8000::1', /AS112/], ['3fff::1', /documentation/], ['3fff:fff:ffff::1', /documentation/], ['5f00::1', /segment routing/],
  ['fc00::1', /unique-local/], ['fd12:3456::1', /unique-local/], ['fdff:ffff::1', /unique-local/],
  ['fe80::1', /link-local/], ['febf:ffff::1', /link-local/], ['fec0::1', /site-local/],
  ['ff02::1', /multicast/], ['ff0e::1', /multicast/],
  // Outside global unicast 2000::/3 and not listed: still not a destination
  ['1000::1', /not global unicast/], ['4000::1', /not global unicast/], ['e000::1', /not global unicast/],
  // IPv4 embedded in IPv6: the embedded address decides (mapped, NAT64) …
  ['::ffff:127.0.0.1', /IPv4-mapped.*127\.0\.0\.1.*loopback/], ['::ffff:7f00:1', /loopback/], ['::ffff:a9fe:a9fe', /link-local/],
  ['::ffff:10.0.0.1', /private-use/], ['::ffff:0.0.0.0', /this network/],
  ['64:ff9b::7f00:1', /RFC 6052.*loopback/], ['64:ff9b::127.0.0.1', /loopback/], ['64:ff9b::a9fe:a9fe', /link-local/], ['64:ff9b::c0a8:1', /private-use/],
  // … and deprecated or tunnel forms are refused whatever they embed, naming it
  ['::127.0.0.1', /IPv4-compatible.*127\.0\.0\.1 \(loopback/], ['::7f00:1', /IPv4-compatible.*loopback/], ['::8.8.8.8', /IPv4-compatible.*8\.8\.8\.8/],
  ['::ffff:0:7f00:1', /IPv4-translated/],
  ['64:ff9b:1::7f00:1', /local-use IPv4\/IPv6 translation/], ['64:ff9b:1:ffff::1', /local-use/],
  ['2002:7f00:1::', /6to4.*127\.0\.0\.1.*loopback/], ['2002:a00:1::1', /6to4.*10\.0\.0\.1/], ['2002:808:808::1', /6to4.*8\.8\.8\.8/],
  // Teredo: client IPv4 stored inverted in the last 32 bits (RFC 4380 §4): ~80ff:fffe = 127.0.0.1
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', /Teredo.*127\.0\.0\.1.*loopback/], ['2001::1', /Teredo/],
  // Spellings: decimal, octal, hex and short IPv4 forms (WHATWG URL host parser, inet_aton)
  ['2130706433', /loopback/], ['0x7f.1', /loopback/], ['0177.0.0.1', /loopback/], ['017700000001', /loopback/], ['0x7f000001', /loopback/],
  ['127.1', /loopback/], ['0x7f.0.0.1', /loopback/], ['3232235521', /private-use/], ['0xa9.0xfe.0xa9.0xfe', /link-local/], ['0', /this network/],
  // Upper case, leading zeros, brackets
  ['[::1]', /loopback/], ['0:0:0:0:0:0:0:1', /loopback/], ['::FFFF:7F00:1', /loopback/], ['FE80::1', /link-local/],
  // Zone ids: link-scoped, never a destination
  ['fe80::1%eth0', /zone/], ['fe80::1%25eth0', /zone/], ['2606:4700::1111%1', /zone/],
  // Not an address at all
  ['', /not an IP/], ['localhost', /not an IP/], ['1.2.3.4.5', /not an IP/], ['::g', /not an IP/], ['256.0.0.1', /not an IP/],
];

const allowed: string[] = [
  // just outside each IPv4 range
  '1.0.0.0', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '126.255.255.255', '128.0.0.0',
  '169.253.255.255', '169.255.0.0', '172.15.255.255', '172.32.0.0', '191.255.255.255', '192.0.1.0', '192.0.3.0',
  '192.88.98.255', '192.88.100.0', '192.167.255.255', '192.169.0.0', '198.17.255.255', '198.20.0.0', '198.51.99.255',
  '198.51.101.0', '203.0.112.255', '203.0.114.0', '223.255.255.255', '8.8.8.8', '1.1.1.1',
  // global unicast IPv6, and just outside the ranges inside 2000::/3
  '2606:4700:4700::1111', '2a00:1450:4001::200e', '2001:200::1', '2001:db7:ffff::1', '2001:db9::1', '2003::1', '2001:4860:4860::8888',
  '3ffe::1', '3fff:1000::1', '2620:4f:8001::1',
  // translation prefixes reaching a public IPv4 address
  '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '64:ff9b::101:101',
  // public addresses in other spellings
  '134744072', '0x8.0x8.0x8.0x8',
];

describe('the outbound blocklist', () => {
  for (const [address, range] of refused) {
    it(`refuses ${address || '(empty)'}`, () => {
      const got = reservedRange(address);
      assert.ok(got, `${address} should be refused`);
      assert.match(got, range);
    });
  }
  it('allows global unicast addresses, including just outside each range', () => {
    for (const address of allowed) assert.equal(reservedRange(address), undefined, address);
  });
});

describe('the host rule', () => {
  it('names local by definition, whatever DNS says', () => {
    for (const h of ['localhost', 'LOCALHOST', 'a.localhost', 'printer.local', 'metadata.google.internal', 'router.home.arpa', 'intranet', 'x.localdomain', 'localhost.']) {
      assert.equal(isLocalName(h), true, h);
    }
    for (const h of ['hooks.example.com', 'localhost.example.com', 'internal.example.com', 'local.example']) assert.equal(isLocalName(h), false, h);
  });

  it('is lifted, names and addresses alike, only by allowPrivate', () => {
    const strict = destinationRule(false);
    const relaxed = destinationRule(true);
    for (const h of ['[::127.0.0.1]', '[::7f00:1]', '127.0.0.1', 'localhost', 'intranet']) {
      assert.ok(strict.screen(h), h);
      assert.equal(relaxed.screen(h), undefined, h);
    }
    assert.equal(strict.screen('hooks.example.com'), undefined);
    assert.deepEqual(strict.screen('[::7f00:1]'), { reason: 'address', host: '::7f00:1', address: '::7f00:1', range: reservedRange('::7f00:1') });
    assert.deepEqual(strict.screen('intranet'), { reason: 'name', host: 'intranet' });
  });
});
