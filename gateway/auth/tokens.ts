/**
 * Operator API tokens: `saf_` + 43 random base64url characters, shown once at creation and
 * stored only as their SHA-256 (a token has 256 bits of entropy, so a fast hash is the
 * right verifier: no offline guessing is possible). `Authorization: Bearer <token>`.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { translateDriverError, type CloudStore, type CloudHandle } from '../../runtime/index.js';
import type { Principal, UserRole } from './principal.js';

/** The operator a token authenticates. */
export type UserPrincipal = Extract<Principal, { kind: 'user' }>;

/** What a token's row says: who it is, and until when (null: no expiry). */
export interface TokenHolder {
  principal: UserPrincipal;
  expiresAt: Date | null;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** The SHA-256 of a token, as stored; undefined when `token` is not shaped like one. */
export const hashApiToken = (token: string): string | undefined =>
  /^saf_[A-Za-z0-9_-]{43}$/.test(token) ? hashToken(token) : undefined;

/** A token just created: the only time its clear text exists. */
export interface CreatedToken {
  tokenId: string;
  token: string;
  name: string;
  role: UserRole;
}

/** Create an operator token with `role`. */
export async function createApiToken(
  store: CloudStore,
  options: { name: string; role: UserRole; expiresAt?: Date },
): Promise<CreatedToken> {
  const token = `saf_${randomBytes(32).toString('base64url')}`;
  const tokenId = randomUUID();
  await store.cloud
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

/** The holder of the unrevoked token whose hash is `tokenHash`, expired or not; undefined if none. */
export async function readApiToken(
  store: CloudStore,
  tokenHash: string,
): Promise<TokenHolder | undefined> {
  const row = await store.cloud
    .selectFrom('api_tokens')
    .select(['token_id', 'name', 'role_name', 'expires_at', 'revoked_at'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null) return undefined;
  return {
    principal: {
      kind: 'user',
      tokenId: row.token_id,
      name: row.name,
      role: row.role_name as UserRole,
    },
    expiresAt: row.expires_at === null ? null : store.codec.parseTime(row.expires_at),
  };
}

/** Whether `holder` may use its token at `now` (it has not expired). */
export const tokenValid = (holder: TokenHolder, now: Date): boolean =>
  holder.expiresAt === null || holder.expiresAt > now;

/**
 * Revoke token `tokenId` at `now`; false when there is no such unrevoked token. Gateways
 * hold tokens in memory (tokenCache.ts): the caller announces the change (`tokens`) in the
 * same transaction, so that every gateway drops them at the commit.
 */
export async function revokeApiToken(h: CloudHandle, tokenId: string, now: Date): Promise<boolean> {
  try {
    const result = await h.cloud
      .updateTable('api_tokens')
      .set({ revoked_at: h.codec.time(now) })
      .where('token_id', '=', tokenId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  } catch (error) {
    throw translateDriverError(error, 'revoke an API token');
  }
}

/** A token as listed: never its hash or clear text. */
export interface ApiTokenSummary {
  tokenId: string;
  name: string;
  role: string;
  /** The token's first 12 characters, to tell tokens apart. */
  prefix: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** Every token, oldest first (revoked ones too). */
export async function listApiTokens(store: CloudStore): Promise<ApiTokenSummary[]> {
  const rows = await store.cloud
    .selectFrom('api_tokens')
    .select([
      'token_id',
      'name',
      'role_name',
      'token_prefix',
      'created_at',
      'expires_at',
      'revoked_at',
    ])
    .orderBy('created_at')
    .orderBy('token_id')
    .execute();
  const time = (value: unknown) => (value === null ? null : store.codec.parseTime(value));
  return rows.map((r) => ({
    tokenId: r.token_id,
    name: r.name,
    role: r.role_name,
    prefix: r.token_prefix,
    createdAt: store.codec.parseTime(r.created_at),
    expiresAt: time(r.expires_at),
    revokedAt: time(r.revoked_at),
  }));
}
