/**
 * Every route module of the control plane, in registration order. `createGateway` registers
 * these unless given its own list.
 */
import type { RouteModule } from '../server.js';
import { registerWorkflowRoutes } from './workflows.js';
import { registerAssignmentRoutes } from './assignments.js';
import { registerConfigRoutes } from '../config/routes.js';
import { registerDeviceRoutes } from './devices.js';
import { registerPolicyRoutes } from './policies.js';
import { registerRegistrationKeyRoutes } from './registrationKeys.js';
import { registerTransactionRoutes } from './transactions.js';
import { registerUserRoutes } from './users.js';
import { registerWorkflowSummaryRoutes } from './workflowSummaries.js';
import { commandRoutes } from './commands.js';
import { registerWasmComponentRoutes } from './wasmComponents.js';
import { registerDashboard } from '../dashboard/registerDashboard.js';
import { fleetRoutes } from '../fleet/module.js';
import { governanceRoutes } from '../governance/module.js';
import { webhookRoutes } from '../webhooks/module.js';
import { auditRoutes } from '../audit/module.js';
import { trendRoutes } from '../trends/module.js';

/** The route modules a full control plane serves. */
export const ALL_ROUTES: readonly RouteModule[] = [
  registerWorkflowRoutes,
  registerDeviceRoutes,
  registerRegistrationKeyRoutes,
  registerUserRoutes,
  registerConfigRoutes,
  registerPolicyRoutes,
  registerAssignmentRoutes,
  registerTransactionRoutes,
  registerWorkflowSummaryRoutes,
  registerWasmComponentRoutes,
  commandRoutes(),
  registerDashboard,
  fleetRoutes(),
  governanceRoutes(),
  webhookRoutes(),
  auditRoutes(),
  trendRoutes(),
];
