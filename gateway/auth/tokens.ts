/**
 * Operator API tokens: `saf_` + 43 random base64url characters, shown once at creation and
 * stored only as their SHA-256 (a token has 256 bits of entropy, so a fast hash is the
 * right verifier: no offline guessing is possible). `Authorization: Bearer <token>`.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Store } from '../../runtime/index.js';
import type { Principal, UserRole } from './principal.js';

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A token just created: the only time its clear text exists. */
export interface CreatedToken {
  tokenId: string;
  token: string;
  name: string;
  role: UserRole;
}

/** Create an operator token with `role`. */
export async function createApiToken(
  store: Store,
  options: { name: string; role: UserRole; expiresAt?: Date },
): Promise<CreatedToken> {
  const token = `saf_${randomBytes(32).toString('base64url')}`;
  const tokenId = randomUUID();
  await store.db
    .insertInto('api_tokens')
    .values({
      token_id: tokenId,
      name: options.name,
      role_name: options.role,
      token_hash: hashToken(token),
      token_prefix: token.slice(0, 12),
      expires_at: options.expiresAt ? store.codec.time(options.expiresAt) : null,
    })
    .execute();
  return { tokenId, token, name: options.name, role: options.role };
}

/** The operator a bearer token belongs to, or undefined (unknown, revoked or expired). */
export async function verifyApiToken(
  store: Store,
  token: string,
  now: Date,
): Promise<Extract<Principal, { kind: 'user' }> | undefined> {
  if (!/^saf_[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const row = await store.db
    .selectFrom('api_tokens')
    .select(['token_id', 'name', 'role_name', 'expires_at', 'revoked_at'])
    .where('token_hash', '=', hashToken(token))
    .executeTakeFirst();
  if (!row || row.revoked_at !== null) return undefined;
  if (row.expires_at !== null && store.codec.parseTime(row.expires_at) <= now) return undefined;
  return {
    kind: 'user',
    tokenId: row.token_id,
    name: row.name,
    role: row.role_name as UserRole,
  };
}
