/**
 * Cache invalidation between gateway processes. Gateways keep device credentials and the
 * ETags of the documents devices poll in memory; a commit that changes what they hold sends
 * NOTIFY on `saffron_changes` in the same transaction (delivered at commit, never for a
 * rollback), and every gateway drops what it names.
 *
 * Payload: `schema|devices|id,id,…` — everything cached about these devices (credentials,
 * existence, their documents) — or `schema|documents|` — every device's documents (a fleet
 * or device-type layer, a policy). The schema keeps deployments sharing a database apart.
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
  | { kind: 'documents' };

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
    change.kind === 'documents'
      ? ['documents|']
      : joinInChunks(change.deviceIds).map((c) => `devices|${c}`);
  for (const body of bodies)
    await sql`SELECT pg_notify(${CHANGES_CHANNEL}, current_schema() || '|' || ${body})`.execute(
      h.db,
    );
}

/** Read a notification of {@link CHANGES_CHANNEL} (its payload after the schema). */
export function parseChange(body: string): CacheChange | undefined {
  const bar = body.indexOf('|');
  const kind = body.slice(0, bar);
  if (kind === 'documents') return { kind };
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
