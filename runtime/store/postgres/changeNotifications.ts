/**
 * Cache invalidation between gateway processes. Gateways keep device credentials, the ETags
 * of the documents devices poll, operators' API tokens and role assignments, and the rules
 * commands are judged by (command versions, authorization policies) in memory; a commit that changes what they hold sends
 * NOTIFY on `saffron_changes` in the same transaction (delivered at commit, never for a
 * rollback), and every gateway drops what it names.
 *
 * Payload: `schema|devices|id,id,…` — everything cached about these devices (credentials,
 * existence, type and location, their documents) — `schema|documents|` — every device's
 * documents (a fleet or device-type layer, a policy) — `schema|tokens|` — every API token —
 * `schema|roles|` — every operator's role assignments — or `schema|rules|` — every command
 * type's versions and authorization policies. The schema
 * keeps deployments sharing a database apart. A kind a gateway does not know drops everything.
 * Device ids cannot contain `|` or `,` (authenticate.ts); long lists are split to stay under
 * NOTIFY's 8000-byte payload.
 */
import { sql } from 'kysely';
import type { StoreHandle } from '../store.js';

/** The channel cache invalidations use. */
export const CHANGES_CHANNEL = 'saffron_changes';

/** What a commit changed, as far as gateway caches are concerned. */
export type CacheChange =
  /** Credentials, existence, type, layers or assignments of these devices. */
  | { kind: 'devices'; deviceIds: readonly string[] }
  /** Something every device's configuration or fraud rules may depend on. */
  | { kind: 'documents' }
  /** An API token was revoked or changed. */
  | { kind: 'tokens' }
  /** A role assignment was added or taken back. */
  | { kind: 'roles' }
  /** A command version or an authorization policy was added, changed or removed. */
  | { kind: 'rules' };

const MAX_PAYLOAD = 7000;

/** `ids` joined with commas, in pieces short enough for one NOTIFY payload each. */
export function joinInChunks(ids: Iterable<string>): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const id of new Set(ids)) {
    if (current && current.length + id.length + 1 > MAX_PAYLOAD) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current},${id}` : id;
  }
  if (current) chunks.push(current);
  return chunks;
}

/** Queue the notification of `change` in the caller's transaction (PostgreSQL only). */
export async function notifyChange(h: StoreHandle, change: CacheChange): Promise<void> {
  if (h.dialect !== 'postgres') return;
  const bodies =
    change.kind === 'devices'
      ? joinInChunks(change.deviceIds).map((c) => `devices|${c}`)
      : [`${change.kind}|`];
  for (const body of bodies)
    await sql`SELECT pg_notify(${CHANGES_CHANNEL}, current_schema() || '|' || ${body})`.execute(
      h.db,
    );
}

/** Read a notification of {@link CHANGES_CHANNEL} (its payload after the schema). */
export function parseChange(body: string): CacheChange | undefined {
  const bar = body.indexOf('|');
  const kind = body.slice(0, bar);
  if (kind === 'documents' || kind === 'tokens' || kind === 'roles' || kind === 'rules')
    return { kind };
  if (kind === 'devices')
    return {
      kind,
      deviceIds: body
        .slice(bar + 1)
        .split(',')
        .filter((id) => id !== ''),
    };
  return undefined; // a kind a newer gateway sends: nothing of ours to drop
}
