/**
 * Every table of the model, in creation order (parents before children), and the sets each
 * tier holds.
 */
import type { TableDef } from './model.js';
import { CORE_TABLES } from './tables/core.js';
import { EDGE_TABLES } from './tables/edge.js';
import * as access from './tables/access.js';
import * as commands from './tables/commands.js';
import * as devices from './tables/devices.js';
import * as ops from './tables/operations.js';

/** Cloud-only tables in creation order. */
export const CLOUD_TABLES: readonly TableDef[] = [
  ops.alembicVersion,
  ops.workerNodes,
  devices.edgeDevices,
  commands.commandBroadcasts,
  commands.commandBatches,
  devices.deviceCommands,
  commands.commandTemplates,
  commands.commandSchedules,
  commands.scheduleExecutions,
  ops.commandAuditLog,
  ops.auditRetentionPolicies,
  access.apiTokens,
  access.authorizationRoles,
  access.roleAssignments,
  access.authorizationPolicies,
  access.commandApprovals,
  access.approvalResponses,
  commands.commandVersions,
  commands.commandChangelog,
  ops.webhookRegistrations,
  ops.webhookDeliveries,
  access.rateLimitRules,
  access.rateLimitTracking,
  devices.deviceConfigs,
  devices.safTransactions,
  devices.deviceAssignments,
  devices.policies,
  ops.wasmComponents,
  ops.workflowDefinitions,
  devices.registrationKeys,
  devices.deviceRequestNonces,
];

/** Tables of the cloud database (PostgreSQL or PGlite). */
export const CLOUD_SCHEMA: readonly TableDef[] = [...CORE_TABLES, ...CLOUD_TABLES];

/** Tables of the edge database (SQLite). */
export const EDGE_SCHEMA: readonly TableDef[] = [...CORE_TABLES, ...EDGE_TABLES];

export { CORE_TABLES, EDGE_TABLES };
