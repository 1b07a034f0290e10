/**
 * A gateway for fleet-operation tests: the command routes (device hub, with its periodic
 * work parked) and the fleet routes, whose driver the test steps by hand (`fleet.tick()`,
 * `fleet.settle()`) on a hand-moved clock — no test waits on a timer.
 */
import { type CloudStore } from '../../runtime/index.js';
import type { FleetDriver } from '../../gateway/fleet/driver.js';
import type { RouteModule } from '../../gateway/index.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { fleetRoutes } from '../../gateway/fleet/module.js';
import { connectDevice, type DeviceSocket, type TestClock } from './device.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import type { TestDialect } from './stores.js';

/** Device link settings that keep the hub's timers out of the way. */
export const QUIET_LINK = { heartbeatIntervalMs: 3_600_000, sweepIntervalMs: 3_600_000 };

/** A test gateway with its fleet driver. */
export interface FleetGateway extends TestGateway {
  fleet: FleetDriver;
}

/** Start a gateway with command and fleet routes (and `more` routes) on `clock`. */
export async function startFleetGateway(
  dialect: TestDialect<CloudStore>,
  clock: TestClock,
  more: readonly RouteModule[] = [],
): Promise<FleetGateway> {
  let fleet: FleetDriver | undefined;
  const gw = await startTestGateway(dialect, {
    now: clock.now,
    routes: [
      commandRoutes(QUIET_LINK),
      fleetRoutes({ tickIntervalMs: 3_600_000, onDriver: (d) => (fleet = d) }),
      ...more,
    ],
  });
  return Object.assign(gw, { fleet: fleet! });
}

/** Connect `deviceId` and say hello; resolves once the server welcomed it. */
export async function onlineDevice(
  url: string,
  deviceId: string,
  secret: string,
  clock: TestClock,
): Promise<DeviceSocket> {
  const device = await connectDevice(url, deviceId, secret, clock.now());
  device.send({ type: 'hello' });
  await device.next('welcome');
  return device;
}

/** JSON of a response, typed loosely. */
export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}
