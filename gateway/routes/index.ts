/**
 * Every route module of the control plane, in registration order. `createGateway` registers
 * these unless given its own list.
 */
import type { RouteModule } from '../server.js';

/** The route modules a full control plane serves. */
export const ALL_ROUTES: readonly RouteModule[] = [];
