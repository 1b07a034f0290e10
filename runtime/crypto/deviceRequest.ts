/**
 * Device request signatures (docs/architecture.md#security): `Authorization: Device <device_id>:<signature>`,
 * `X-Saffron-Timestamp` (RFC 3339) and `X-Saffron-Nonce`; the signature is base64url
 * HMAC-SHA256(device secret, METHOD \n path?query \n timestamp \n nonce \n sha256hex(body)).
 * Used by devices to sign and by the gateway to verify, in constant time. A socket upgrade
 * is signed without a nonce (the empty string in its place): its freshness is proven on the
 * socket instead (socketProof.ts), so opening a socket records nothing.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a signature covers. */
export interface SignedRequest {
  method: string;
  /** Path with query string, as sent. */
  pathWithQuery: string;
  timestamp: string;
  nonce: string;
  body: Uint8Array | string;
}

/** sha256hex of an empty body: every GET's and every socket upgrade's. */
const EMPTY_BODY_HASH = createHash('sha256').digest('hex');

/** The string a device signs. */
export function signingString(request: SignedRequest): string {
  const bodyHash =
    request.body.length === 0
      ? EMPTY_BODY_HASH
      : createHash('sha256').update(request.body).digest('hex');
  return [
    request.method.toUpperCase(),
    request.pathWithQuery,
    request.timestamp,
    request.nonce,
    bodyHash,
  ].join('\n');
}

/** The signature of `request` under `secret` (base64url). */
export function signRequest(secret: string, request: SignedRequest): string {
  return createHmac('sha256', secret).update(signingString(request)).digest('base64url');
}

/** Whether `signature` is `request`'s under `secret`; constant time in the signature. */
export function verifyRequestSignature(
  secret: string,
  request: SignedRequest,
  signature: string,
): boolean {
  const expected = Buffer.from(signRequest(secret, request));
  const given = Buffer.from(signature);
  // compare equal-length buffers only; the length of a valid signature is public
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The headers a device sends with a signed request. */
export function deviceAuthHeaders(
  deviceId: string,
  secret: string,
  request: Omit<SignedRequest, 'timestamp' | 'nonce'> & { timestamp?: string; nonce?: string },
): Record<string, string> {
  const timestamp = request.timestamp ?? new Date().toISOString();
  const nonce = request.nonce ?? randomBytes(16).toString('base64url');
  const signature = signRequest(secret, { ...request, timestamp, nonce });
  return {
    authorization: `Device ${deviceId}:${signature}`,
    'x-saffron-timestamp': timestamp,
    'x-saffron-nonce': nonce,
  };
}

/**
 * The headers of a device's socket upgrade: signed like any request over an empty body and
 * an empty nonce, with no `X-Saffron-Nonce` header — the gateway then challenges the socket
 * (see socketProof.ts).
 */
export function deviceUpgradeHeaders(
  deviceId: string,
  secret: string,
  request: { pathWithQuery: string; timestamp?: string },
): Record<string, string> {
  const timestamp = request.timestamp ?? new Date().toISOString();
  const signature = signRequest(secret, {
    method: 'GET',
    pathWithQuery: request.pathWithQuery,
    timestamp,
    nonce: '',
    body: '',
  });
  return { authorization: `Device ${deviceId}:${signature}`, 'x-saffron-timestamp': timestamp };
}
