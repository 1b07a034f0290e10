/**
 * The signed-document format: a document verifies whatever order its keys arrive in, and
 * any change to a signed member is reported — as corruption when the checksum no longer
 * matches, as tampering when only the signature catches it (property tests).
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  contentChecksum,
  documentEtag,
  signedText,
  verifySignedDocument,
} from '../../runtime/index.js';

const pair = generateKeyPairSync('ed25519');
const publicKeyPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();

function signed(config: Record<string, unknown>, deviceId: string): Record<string, unknown> {
  const unsigned = {
    type: 'saffron.device-config.v1',
    device_id: deviceId,
    config,
    checksum: contentChecksum(config),
  };
  return {
    ...unsigned,
    signature: sign(null, Buffer.from(signedText(unsigned)), pair.privateKey).toString('base64'),
  };
}

const config = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), {
  minKeys: 1,
  maxKeys: 6,
});

/** The same document with its keys (at every depth) in reverse order. */
const reversed = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(reversed)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .reverse()
            .map(([k, v]) => [k, reversed(v)]),
        )
      : value;

describe('signed documents', () => {
  it('verify after a JSON round trip in any key order, with a stable ETag (property)', () => {
    fc.assert(
      fc.property(config, fc.string({ minLength: 1, maxLength: 20 }), (content, deviceId) => {
        const doc = signed(content, deviceId);
        const received = reversed(JSON.parse(JSON.stringify(doc))) as Record<string, unknown>;
        expect(verifySignedDocument(received, publicKeyPem)).toEqual({ ok: true });
        expect(documentEtag(received)).toBe(documentEtag(doc));
        const { signature: _s, ...unsigned } = doc;
        expect(documentEtag(unsigned)).toBe(documentEtag(doc));
      }),
      { numRuns: 50 },
    );
  });

  it('report a changed config as corruption, and a re-checksummed one as tampering (property)', () => {
    fc.assert(
      fc.property(config, fc.string({ maxLength: 6 }), (content, key) => {
        fc.pre(canonicalJson(content[key]) !== canonicalJson({ injected: true }));
        const doc = signed(content, 'dev-1');
        const changed = {
          ...(doc.config as Record<string, unknown>),
          [key]: { injected: true },
        };
        const corrupted = { ...doc, config: changed };
        expect(verifySignedDocument(corrupted, publicKeyPem)).toMatchObject({
          ok: false,
          code: 'CONFIG_CORRUPTED',
        });
        const forged = { ...corrupted, checksum: contentChecksum(changed) };
        expect(verifySignedDocument(forged, publicKeyPem)).toMatchObject({
          ok: false,
          code: 'CONFIG_TAMPERED',
        });
      }),
      { numRuns: 50 },
    );
  });

  it('refuse what is not a signed document', () => {
    for (const value of [
      null,
      [],
      'x',
      { type: 'other', checksum: 'a', signature: 'b' },
      { type: 'saffron.device-config.v1' },
    ])
      expect(verifySignedDocument(value, publicKeyPem)).toMatchObject({
        ok: false,
        code: 'CONFIG_MALFORMED',
      });
    const doc = signed({ a: 1 }, 'd');
    expect(
      verifySignedDocument({ ...doc, signature: 'not base64 at all!' }, publicKeyPem),
    ).toMatchObject({
      code: 'CONFIG_TAMPERED',
    });
  });
});
