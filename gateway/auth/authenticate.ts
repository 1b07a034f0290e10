/**
 * Turning a request's credentials into a {@link Principal}: a bearer API token, or a device
 * signature checked against the device's current secret (or its previous one during a
 * rotation's grace period), a timestamp within the allowed skew, and a nonce not seen
 * before. Every failure is a 401 that says which check failed but never reveals whether a
 * device exists.
 */
import type { Store } from '../../runtime/index.js';
import { Problem } from '../problem.js';
import { verifyRequestSignature, type SignedRequest } from '../../runtime/index.js';
import type { CredentialCache } from './credentialCache.js';
import type { NonceCache } from './nonces.js';
import type { Principal } from './principal.js';
import { verifyApiToken } from './tokens.js';

/** What authentication needs. */
export interface AuthDeps {
  store: Store;
  /** Device secrets, held in memory and dropped on change (credentialCache.ts). */
  credentials: CredentialCache;
  nonces: NonceCache;
  now: () => Date;
  /** Largest accepted clock difference of a device timestamp (default 300 s). */
  skewMs: number;
}

/** The parts of a request authentication reads. */
export interface Credentials {
  authorization: string | undefined;
  timestamp: string | undefined;
  nonce: string | undefined;
  method: string;
  pathWithQuery: string;
  body: Uint8Array | string;
}

const unauthorized = (code: string, detail: string) =>
  new Problem(401, code, detail, {}, { 'www-authenticate': 'Bearer, Device' });

/** What a device id may look like (route schemas use the same pattern). */
export const DEVICE_ID_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;
const NONCE = /^[A-Za-z0-9_-]{16,128}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Authenticate a request or throw a 401 problem. */
export async function authenticate(deps: AuthDeps, request: Credentials): Promise<Principal> {
  const header = request.authorization;
  if (!header) throw unauthorized('AUTH_REQUIRED', 'missing Authorization header');
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  const value = space < 0 ? '' : header.slice(space + 1).trim();
  if (scheme.toLowerCase() === 'bearer') {
    const user = await verifyApiToken(deps.store, value, deps.now());
    if (!user) throw unauthorized('INVALID_TOKEN', 'the API token is unknown, revoked or expired');
    return user;
  }
  if (scheme.toLowerCase() === 'device') return authenticateDevice(deps, request, value);
  throw unauthorized('AUTH_SCHEME_UNSUPPORTED', `unsupported authorization scheme '${scheme}'`);
}

async function authenticateDevice(
  deps: AuthDeps,
  request: Credentials,
  value: string,
): Promise<Principal> {
  const colon = value.lastIndexOf(':');
  const deviceId = colon < 0 ? '' : value.slice(0, colon);
  const signature = colon < 0 ? '' : value.slice(colon + 1);
  if (!DEVICE_ID_PATTERN.test(deviceId) || signature.length === 0)
    throw unauthorized(
      'MALFORMED_CREDENTIALS',
      'expected Authorization: Device <device_id>:<signature>',
    );
  const { timestamp, nonce } = request;
  if (!timestamp || !RFC3339.test(timestamp))
    throw unauthorized('TIMESTAMP_INVALID', 'X-Saffron-Timestamp must be an RFC 3339 time');
  const now = deps.now().getTime();
  if (Math.abs(now - Date.parse(timestamp)) > deps.skewMs)
    throw unauthorized(
      'TIMESTAMP_OUT_OF_WINDOW',
      'X-Saffron-Timestamp is too far from the server time',
    );
  if (!nonce || !NONCE.test(nonce))
    throw unauthorized('NONCE_INVALID', 'X-Saffron-Nonce must be 16–128 base64url characters');
  const signed: SignedRequest = {
    method: request.method,
    pathWithQuery: request.pathWithQuery,
    timestamp,
    nonce,
    body: request.body,
  };
  const valid = await deps.credentials.verify(deviceId, now, (secrets) => {
    // an unknown device costs the same HMAC as a known one
    const candidates = secrets.length > 0 ? secrets : ['\u0000no-such-device'];
    // check every candidate, so timing does not tell which one matched
    return candidates.map((s) => verifyRequestSignature(s, signed, signature)).includes(true);
  });
  if (!valid) throw unauthorized('INVALID_SIGNATURE', 'device authentication failed');
  if (!(await deps.nonces.remember(deviceId, nonce, now)))
    throw unauthorized('REPLAYED_REQUEST', 'this nonce was already used');
  return { kind: 'device', deviceId };
}
