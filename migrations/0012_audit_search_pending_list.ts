/** Migration 0012_audit_search_pending_list: a short pending list for the command audit's search index. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0012_audit_search_pending_list',
  description:
    "idx_command_audit_log_search (GIN) merges its pending list every 256 kB instead of PostgreSQL's 4 MB: the insert that fills the list merges it, and at a thousand commands a second the 4 MB merge held a command statement for 30 ms every 5 s",
  statements: [`ALTER INDEX idx_command_audit_log_search SET (gin_pending_list_limit = 256)`],
};
