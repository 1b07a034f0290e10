/** The address groups, allowances and secret host patterns outbound requests are checked with. */
import { describe, expect, it } from 'vitest';
import {
  DestinationPolicy,
  hostPatternAllows,
  privateNetworkOf,
} from '../../runtime/http/index.js';
import { envSecrets, mapSecrets } from '../../runtime/template/index.js';

describe('privateNetworkOf', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
  ])('%s is %s', (address, group) => {
    expect(privateNetworkOf(address)).toBe(group);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '93.184.216.34'])(
    '%s is public',
    (address) => expect(privateNetworkOf(address)).toBeUndefined(),
  );
});

describe('DestinationPolicy', () => {
  it('allows groups, ranges and addresses named by the operator, and nothing else', () => {
    const policy = new DestinationPolicy({
      allowedPrivateNetworks: ['loopback', '10.1.0.0/16', '192.168.5.5'],
    });
    expect(policy.refusal('h', '127.0.0.1', 80)).toBeUndefined();
    expect(policy.refusal('h', '::ffff:127.0.0.1', 80)).toBeUndefined();
    expect(policy.refusal('h', '10.1.200.3', 80)).toBeUndefined();
    expect(policy.refusal('h', '192.168.5.5', 80)).toBeUndefined();
    expect(policy.refusal('h', '10.2.0.1', 80)?.code).toBe('DESTINATION_REFUSED');
    expect(policy.refusal('h', '192.168.5.6', 80)?.code).toBe('DESTINATION_REFUSED');
    expect(policy.refusal('h', '169.254.169.254', 80)?.details).toMatchObject({
      reason: 'link-local',
    });
  });

  it('refuses its local ports on local addresses even when loopback is allowed', () => {
    const policy = new DestinationPolicy({
      allowedPrivateNetworks: ['loopback'],
      refusedLocalPorts: [7420],
    });
    expect(policy.refusal('h', '127.0.0.1', 7420)?.details).toMatchObject({
      reason: 'local-port',
    });
    expect(policy.refusal('h', '0.0.0.0', 7420)?.code).toBe('DESTINATION_REFUSED');
    expect(policy.refusal('h', '127.0.0.1', 7421)).toBeUndefined();
    expect(policy.refusal('h', '8.8.8.8', 7420)).toBeUndefined();
  });

  it('rejects an allowance entry that is neither a group, an address nor a range', () => {
    expect(() => new DestinationPolicy({ allowedPrivateNetworks: ['intranet'] })).toThrow(
      /intranet/,
    );
    expect(() => new DestinationPolicy({ allowedPrivateNetworks: ['10.0.0.0/40'] })).toThrow(
      /prefix/,
    );
  });
});

describe('secret host patterns', () => {
  const url = (text: string) => new URL(text);
  it('matches a host on any port, or on the port given', () => {
    expect(hostPatternAllows('api.example.com', url('https://API.example.com./x'))).toBe(true);
    expect(hostPatternAllows('api.example.com', url('https://api.example.com:8443/'))).toBe(true);
    expect(hostPatternAllows('api.example.com:443', url('https://api.example.com/'))).toBe(true);
    expect(hostPatternAllows('api.example.com:443', url('http://api.example.com/'))).toBe(false);
    expect(hostPatternAllows('api.example.com', url('https://api.example.com.evil.test/'))).toBe(
      false,
    );
  });

  it('matches a wildcard on names below the domain only', () => {
    expect(hostPatternAllows('*.example.com', url('https://a.b.example.com/'))).toBe(true);
    expect(hostPatternAllows('*.example.com', url('https://example.com/'))).toBe(false);
    expect(hostPatternAllows('*.example.com', url('https://badexample.com/'))).toBe(false);
  });

  it('matches IPv6 literals in brackets', () => {
    expect(hostPatternAllows('[fd00::1]:8443', url('https://[fd00::1]:8443/'))).toBe(true);
    expect(hostPatternAllows('[fd00::1]', url('https://[fd00::2]/'))).toBe(false);
  });
});

describe('secret hosts from providers', () => {
  it('reads SAFFRON_SECRET_<NAME>_HOSTS with the spelling the value was found under', () => {
    const secrets = envSecrets({
      SAFFRON_SECRET_API_KEY: 'k1',
      SAFFRON_SECRET_API_KEY_HOSTS: 'api.example.com, *.pay.example.com ,',
    });
    expect(secrets.hosts?.('api_key')).toEqual(['api.example.com', '*.pay.example.com']);
    expect(envSecrets({ SAFFRON_SECRET_X: 'v' }).hosts?.('X')).toEqual([]);
  });

  it('carries hosts of a map secret; a plain string has none', () => {
    const secrets = mapSecrets({ A: { value: '1', hosts: ['a.example'] }, B: '2' });
    expect(secrets.get('A')).toBe('1');
    expect(secrets.hosts?.('A')).toEqual(['a.example']);
    expect(secrets.hosts?.('B')).toEqual([]);
  });
});
