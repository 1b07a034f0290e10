/**
 * Turning a request's credentials into a {@link Principal}: a bearer API token, or a device
 * signature checked against the device's current secret (or its previous one during a
 * rotation's grace period), a timestamp within the allowed skew, and a nonce not seen
 * before. Every failure is a 401 that says which check failed but never reveals whether a
 * device exists.
 *
 * Authentication runs in two halves so that a stranger cannot make the server read a body:
 * {@link authenticateHeaders} checks everything the headers carry before the body is read —
 * a bearer token completely; for a device the header's shape, the timestamp's window, the
 * nonce's shape and that the device exists — and {@link verifyDeviceBody} checks the
 * signature, which covers the body's hash, once the body has been read. The early refusal of
 * an unknown device id shows that the id is unknown (ids are identifiers, not secrets); the
 * secret is still proven only by the signature.
 *
 * How a nonce is checked depends on what a replay could do (see {@link ReplayCheck}): a
 * request that changes state waits for the shared table, a read is answered from this
 * gateway's memory and its nonce written behind, and a socket upgrade carries no nonce at
 * all because the socket proves its freshness by answering a challenge.
 */
import { Problem } from '../problem.js';
import { verifyRequestSignature, type SignedRequest } from '../../runtime/index.js';
import type { CredentialCache } from './credentialCache.js';
import type { NonceCache } from './nonces.js';
import type { Principal } from './principal.js';
import type { TokenCache } from './tokenCache.js';

/** What authentication needs. */
export interface AuthDeps {
  /** Device secrets, held in memory and dropped on change (credentialCache.ts). */
  credentials: CredentialCache;
  /** Operators' API tokens, held in memory and dropped on revocation (tokenCache.ts). */
  tokens: TokenCache;
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

/** The parts of a request {@link authenticateHeaders} reads: everything but the body. */
export type RequestHeaders = Omit<Credentials, 'body'>;

/**
 * What the headers established: an operator (completely authenticated), or a device whose
 * headers hold and whose signature is still to be checked over the body.
 */
export type HeaderCheck =
  | { kind: 'user'; principal: Extract<Principal, { kind: 'user' }> }
  | {
      kind: 'device';
      deviceId: string;
      signature: string;
      method: string;
      pathWithQuery: string;
      timestamp: string;
      nonce: string | undefined;
      replay: ReplayCheck;
    };

/** Authenticate a request or throw a 401 problem. */
export async function authenticate(deps: AuthDeps, request: Credentials): Promise<Principal> {
  const checked = await authenticateHeaders(deps, request);
  return checked.kind === 'user'
    ? checked.principal
    : verifyDeviceBody(deps, checked, request.body);
}

/**
 * Check what the headers carry, before any body is read: a bearer token completely; a
 * device's header shape, timestamp, nonce shape and existence. Throws a 401 problem.
 */
export async function authenticateHeaders(
  deps: AuthDeps,
  request: RequestHeaders,
): Promise<HeaderCheck> {
  const header = request.authorization;
  if (!header) throw unauthorized('AUTH_REQUIRED', 'missing Authorization header');
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  const value = space < 0 ? '' : header.slice(space + 1).trim();
  if (scheme.toLowerCase() === 'bearer') {
    const user = await deps.tokens.verify(value, deps.now());
    if (!user) throw unauthorized('INVALID_TOKEN', 'the API token is unknown, revoked or expired');
    return { kind: 'user', principal: user };
  }
  if (scheme.toLowerCase() === 'device') return checkDeviceHeaders(deps, request, value);
  throw unauthorized('AUTH_SCHEME_UNSUPPORTED', `unsupported authorization scheme '${scheme}'`);
}

const deviceRefused = () => unauthorized('INVALID_SIGNATURE', 'device authentication failed');

async function checkDeviceHeaders(
  deps: AuthDeps,
  request: RequestHeaders,
  value: string,
): Promise<HeaderCheck> {
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
  // a device with no secret cannot have signed anything: refuse before its body is read
  if ((await deps.credentials.secrets(deviceId, now)).length === 0) throw deviceRefused();
  return {
    kind: 'device',
    deviceId,
    signature,
    method: request.method,
    pathWithQuery: request.pathWithQuery,
    timestamp,
    nonce,
    replay,
  };
}

/**
 * Check a device's signature over the body it sent (the exact bytes), then record its nonce;
 * the device's {@link Principal}, or a 401 problem.
 */
export async function verifyDeviceBody(
  deps: AuthDeps,
  checked: Extract<HeaderCheck, { kind: 'device' }>,
  body: Uint8Array | string,
): Promise<Principal> {
  const { deviceId, nonce, replay } = checked;
  const signed: SignedRequest = {
    method: checked.method,
    pathWithQuery: checked.pathWithQuery,
    timestamp: checked.timestamp,
    nonce: nonce ?? '',
    body,
  };
  const now = deps.now().getTime();
  const valid = await verifyDeviceSecret(deps, deviceId, now, (secret) =>
    verifyRequestSignature(secret, signed, checked.signature),
  );
  if (!valid) throw deviceRefused();
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
