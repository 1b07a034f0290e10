/**
 * Turning a request's credentials into a {@link Principal}: a bearer API token, or a device
 * signature checked against the device's current secret (or its previous one during a
 * rotation's grace period), a timestamp within the allowed skew, and a nonce not seen
 * before. Every failure is a 401 that says which check failed but never reveals whether a
 * device exists.
 *
 * How a nonce is checked depends on what a replay could do (see {@link ReplayCheck}): a
 * request that changes state waits for the shared table, a read is answered from this
 * gateway's memory and its nonce written behind, and a socket upgrade carries no nonce at
 * all because the socket proves its freshness by answering a challenge.
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

/**
 * How a device request's nonce is checked against replays:
 * - `strict` — accepted once across every gateway on the database before the request is
 *   answered (one insert into the shared table): requests that change state.
 * - `window` — accepted once by this gateway at once, and across gateways once this
 *   gateway's write-behind batch is flushed and announced (nonces.ts): reads whose replay
 *   can only show a read-only document again.
 * - `challenge` — no nonce (the request must not carry one); the caller proves freshness
 *   itself: the socket upgrade, whose socket must answer a random challenge.
 */
export type ReplayCheck = 'strict' | 'window' | 'challenge';

/** The parts of a request authentication reads. */
export interface Credentials {
  authorization: string | undefined;
  timestamp: string | undefined;
  nonce: string | undefined;
  method: string;
  pathWithQuery: string;
  body: Uint8Array | string;
  /** Default: `window` for GET and HEAD, `strict` for the other methods. */
  replay?: ReplayCheck;
}

/** The check a request of `method` gets unless its route asks for another. */
export const defaultReplayCheck = (method: string): ReplayCheck =>
  method === 'GET' || method === 'HEAD' ? 'window' : 'strict';

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
  const replay = request.replay ?? defaultReplayCheck(request.method);
  if (replay === 'challenge' ? nonce !== undefined : !nonce || !NONCE.test(nonce))
    throw unauthorized(
      'NONCE_INVALID',
      replay === 'challenge'
        ? 'this request is signed without X-Saffron-Nonce'
        : 'X-Saffron-Nonce must be 16–128 base64url characters',
    );
  const signed: SignedRequest = {
    method: request.method,
    pathWithQuery: request.pathWithQuery,
    timestamp,
    nonce: nonce ?? '',
    body: request.body,
  };
  const valid = await verifyDeviceSecret(deps, deviceId, now, (secret) =>
    verifyRequestSignature(secret, signed, signature),
  );
  if (!valid) throw unauthorized('INVALID_SIGNATURE', 'device authentication failed');
  if (nonce !== undefined && replay !== 'challenge') {
    if (!(await deps.nonces.remember(deviceId, nonce, now, replay)))
      throw unauthorized('REPLAYED_REQUEST', 'this nonce was already used');
  }
  return { kind: 'device', deviceId };
}

/**
 * Whether `check` holds for one of the secrets `deviceId` may sign with at `nowMs` (its
 * current one and, during a rotation's grace period, its previous one). Every candidate is
 * checked, so timing does not tell which one matched, and an unknown device costs the same
 * HMAC as a known one. Request signatures and the socket's proof both go through here.
 */
export function verifyDeviceSecret(
  deps: Pick<AuthDeps, 'credentials'>,
  deviceId: string,
  nowMs: number,
  check: (secret: string) => boolean,
): Promise<boolean> {
  return deps.credentials.verify(deviceId, nowMs, (secrets) => {
    // an unknown device costs the same HMAC as a known one
    const candidates = secrets.length > 0 ? secrets : ['\u0000no-such-device'];
    return candidates.map(check).includes(true);
  });
}
