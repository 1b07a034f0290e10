/**
 * Events of the device status machine, built by typed constructors so no event name is a
 * string literal scattered through the gateway.
 */

/** Every event the device machine accepts. */
export type DeviceEvent =
  | { type: 'dev.connected'; sessionId: string }
  | { type: 'dev.disconnected'; sessionId: string }
  | { type: 'dev.sync.started' }
  | { type: 'dev.sync.finished' }
  | { type: 'dev.stale' };

/** Constructors for {@link DeviceEvent}s. */
export const devEvents = {
  connected: (sessionId: string): DeviceEvent => ({ type: 'dev.connected', sessionId }),
  disconnected: (sessionId: string): DeviceEvent => ({ type: 'dev.disconnected', sessionId }),
  syncStarted: (): DeviceEvent => ({ type: 'dev.sync.started' }),
  syncFinished: (): DeviceEvent => ({ type: 'dev.sync.finished' }),
  stale: (): DeviceEvent => ({ type: 'dev.stale' }),
};
