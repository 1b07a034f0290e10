/**
 * Operators' API tokens held in memory, so that authenticating an operator's request needs no
 * database read: per token hash, who holds it and until when (expiry is checked at every use).
 *
 * Only tokens that exist and are not revoked are kept (random tokens cannot push real ones
 * out). Every entry is dropped when a token is revoked — `DELETE /api/v1/users/{token_id}`
 * or `saffron users revoke`, on any gateway or from the command line: both announce it on the
 * change bus in the revoking transaction — so a revoked token is refused here within the
 * notification's delay, as a rotated device secret is (credentialCache.ts). An entry also
 * expires at most {@link TOKEN_TTL_MS} after the read that filled it began: the bound for a
 * token changed by hand in SQL, which announces nothing. Nothing is kept or served while the
 * gateway cannot vouch that it hears changes in time (`trusted`).
 */
import type { CacheChange, CloudStore } from '../../runtime/index.js';
import {
  CACHE_DEFAULTS,
  createInvalidatingCache,
  type CacheBounds,
} from '../cache/invalidatingCache.js';
import {
  hashApiToken,
  readApiToken,
  tokenValid,
  type TokenHolder,
  type UserPrincipal,
} from './tokens.js';

/** Longest a token is used from memory without a read (a change made by hand in SQL). */
export const TOKEN_TTL_MS = 60_000;

/** The change that revokes tokens: every gateway drops every token it holds. */
export const TOKENS_CHANGED: CacheChange = { kind: 'tokens' };

/** The tokens of operators, read through. */
export interface TokenCache {
  /** The operator `token` authenticates at `now`; undefined when unknown, revoked or expired. */
  verify(token: string, now: Date): Promise<UserPrincipal | undefined>;
  /** Drop what `change` names; everything when undefined. */
  apply(change: CacheChange | undefined): void;
}

/** A token cache over `store`, keeping entries while `trusted()`. */
export function createTokenCache(
  store: CloudStore,
  trusted: () => boolean,
  bounds: CacheBounds = {},
): TokenCache {
  const cache = createInvalidatingCache<TokenHolder>({
    maxEntries: bounds.maxEntries ?? CACHE_DEFAULTS.maxEntries,
    ttlMs: Math.min(bounds.ttlMs ?? CACHE_DEFAULTS.ttlMs, TOKEN_TTL_MS),
    trusted,
  });
  return {
    async verify(token, now) {
      const hash = hashApiToken(token);
      if (hash === undefined) return undefined;
      const holder =
        cache.get(hash) ??
        (await cache.fill(
          hash,
          () => readApiToken(store, hash),
          (found) => found,
        ));
      return holder && tokenValid(holder, now) ? holder.principal : undefined;
    },
    apply(change) {
      if (change === undefined || change.kind === 'tokens') cache.clear();
    },
  };
}
