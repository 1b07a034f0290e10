/**
 * Fleet operations (the "commands and broadcasting" part of the spec): command batches,
 * broadcasts, templates and schedules, and the driver that moves them (gateway/fleet/).
 * One route module so the driver starts and stops with its routes; register it after the
 * command routes, whose device hub pushes what it creates.
 */
import type { GatewayContext } from '../context.js';
import { registerBatchRoutes } from './batchRoutes.js';
import { registerBroadcastRoutes } from './broadcastRoutes.js';
import { createFleetDriver, type FleetDriver, type FleetDriverOptions } from './driver.js';
import { registerScheduleRoutes } from './scheduleRoutes.js';
import { registerTemplateRoutes } from './templateRoutes.js';
import type { RouteModule } from '../server.js';

/** Options of {@link fleetRoutes}. */
export interface FleetOptions extends FleetDriverOptions {
  /** Called with the driver once it runs (embedders and tests drive or observe it). */
  onDriver?: (driver: FleetDriver) => void;
}

/** The fleet operation routes, with their driver tuned by `options`. */
export function fleetRoutes(options: FleetOptions = {}): RouteModule {
  return (ctx: GatewayContext) => {
    const driver = createFleetDriver(ctx, options);
    driver.start();
    ctx.onClose(() => driver.close());
    options.onDriver?.(driver);
    registerBatchRoutes(ctx, driver);
    registerBroadcastRoutes(ctx, driver);
    registerTemplateRoutes(ctx, driver);
    registerScheduleRoutes(ctx);
  };
}
