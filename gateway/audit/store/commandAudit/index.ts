/** Reading the command audit log (cloud tier): filters, full-text search, keyset pages. */
export type { CommandAuditRecord } from './commandAuditRecord.js';
export {
  searchCommandAudit,
  type CommandAuditFilter,
  type CommandAuditPage,
} from './searchCommandAudit.js';
