/**
 * `device_config_cache`: the last verified document per name. The `config` column holds the
 * whole document without its signature (the signature has its own column), not just the
 * content member, so the agent can verify the cached copy again at every start: a cache
 * edited on disk, or a cloud key rotated since, is then caught the same way a bad download
 * is. `version` is the device's local revision counter of that document (the cloud's own
 * version label, e.g. `f1.t0.d2`, is not an integer and stays inside the document).
 */
import { translateDriverError, type EdgeStore, type EdgeHandle } from '../../runtime/index.js';
import type { ConfigDocumentName } from './documents.js';

/** A cached document as stored (not verified by reading it). */
export interface CachedConfig {
  name: ConfigDocumentName;
  etag: string;
  revision: number;
  /** The document with its signature. */
  document: Record<string, unknown>;
  checksum: string;
  fetchedAt: Date;
  appliedAt: Date | null;
}

/** The cached document `name`, if any. */
export async function readCachedConfig(
  h: EdgeHandle,
  name: ConfigDocumentName,
): Promise<CachedConfig | undefined> {
  try {
    const row = await h.edge
      .selectFrom('device_config_cache')
      .selectAll()
      .where('config_name', '=', name)
      .executeTakeFirst();
    if (!row) return undefined;
    const unsigned = h.codec.parseJson(row.config) as Record<string, unknown>;
    return {
      name,
      etag: row.etag,
      revision: row.version ?? 0,
      document: { ...unsigned, signature: row.signature },
      checksum: row.checksum,
      fetchedAt: h.codec.parseTime(row.fetched_at),
      appliedAt: row.applied_at === null ? null : h.codec.parseTime(row.applied_at),
    };
  } catch (error) {
    throw translateDriverError(error, `read cached config ${name}`);
  }
}

/**
 * Replace the cached document `name` with `document` (verified by the caller), not yet
 * applied. Returns its local revision (the previous one plus one).
 */
export async function saveCachedConfig(
  store: EdgeStore,
  entry: { name: ConfigDocumentName; etag: string; document: Record<string, unknown> },
  now: Date,
): Promise<number> {
  const { signature, ...unsigned } = entry.document;
  try {
    return await store.transaction(async (tx) => {
      const previous = await tx.edge
        .selectFrom('device_config_cache')
        .select('version')
        .where('config_name', '=', entry.name)
        .executeTakeFirst();
      const revision = (previous?.version ?? 0) + 1;
      const row = {
        etag: entry.etag,
        version: revision,
        config: tx.codec.json(unsigned),
        checksum: String(unsigned.checksum),
        signature: String(signature),
        fetched_at: tx.codec.time(now),
        applied_at: null,
      };
      await tx.edge
        .insertInto('device_config_cache')
        .values({ config_name: entry.name, ...row })
        .onConflict((oc) => oc.column('config_name').doUpdateSet(row))
        .execute();
      return revision;
    });
  } catch (error) {
    throw translateDriverError(error, `cache config ${entry.name}`);
  }
}

/** Record that the cached document `name` with `etag` was applied at `at`. */
export async function markConfigApplied(
  h: EdgeHandle,
  name: ConfigDocumentName,
  etag: string,
  at: Date,
): Promise<void> {
  try {
    await h.edge
      .updateTable('device_config_cache')
      .set({ applied_at: h.codec.time(at) })
      .where('config_name', '=', name)
      .where('etag', '=', etag)
      .execute();
  } catch (error) {
    throw translateDriverError(error, `mark config ${name} applied`);
  }
}
