/**
 * Tunables of the device link (WebSocket sessions, command delivery and redelivery). The
 * defaults suit a fleet on mobile networks; tests shrink the intervals instead of sleeping.
 */

/** Options of the device link; every field has a default. */
export interface DeviceLinkOptions {
  /** Server heartbeat period; a session silent for `missedHeartbeats` periods is closed (30 s). */
  heartbeatIntervalMs?: number;
  /** Heartbeat periods of silence before a session is closed (3). */
  missedHeartbeats?: number;
  /** How long a DELIVERED command waits for its ack before it is retried (60 s). */
  ackTimeoutMs?: number;
  /** Period of the retry / expiry sweep (5 s). */
  sweepIntervalMs?: number;
  /** First retry delay; doubles per retry, with jitter (5 s). */
  retryBaseMs?: number;
  /** Longest retry delay (10 min). */
  retryMaxMs?: number;
  /** Bytes a socket may have queued before pushes stop (1 MiB). */
  maxBufferedBytes?: number;
  /** How long a socket may stay over `maxBufferedBytes` before it is closed with 1013 (30 s). */
  backpressureGraceMs?: number;
  /** Largest message a device may send (64 KiB; the server's ws `maxPayload` caps it too). */
  maxInboundBytes?: number;
  /** Commands handed out per delivery round (100). */
  deliveryBatch?: number;
  /**
   * How often the gateway writes the connects, disconnects and `last_seen` its sessions
   * queued, in one transaction for all devices (250 ms; link/presence.ts). `edge_devices`
   * — what the dashboard and the API show — is behind by at most this plus one write.
   */
  presenceFlushMs?: number;
  /** Devices per presence write; this many queued are written without waiting (1,000). */
  presenceBatch?: number;
  /** How often a connected device's `last_seen` is written (5 min). */
  lastSeenEveryMs?: number;
  /** A device ONLINE or SYNCING with `last_seen` older than this is reset to OFFLINE (3 × lastSeenEveryMs). */
  staleAfterMs?: number;
  /**
   * Socket handshakes one gateway carries at once — from the upgrade request until the
   * device has proven itself on the socket and its connect is queued for the presence writer
   * (200). Beyond it an upgrade is answered 503 with a
   * jittered `Retry-After`, so a reconnect storm queues on the devices, not in the gateway.
   */
  maxPendingHandshakes?: number;
  /**
   * How long a socket upgraded without a nonce has to answer its challenge with a valid
   * `hello` before it is closed with 4002 (10 s). Checked on a shared timer every quarter of
   * it, so a socket may live up to 1.25 times as long.
   */
  proofTimeoutMs?: number;
}

/** Device link settings with defaults applied. */
export type DeviceLinkSettings = Required<DeviceLinkOptions>;

/** Apply the defaults. */
export function deviceLinkSettings(options: DeviceLinkOptions = {}): DeviceLinkSettings {
  const lastSeenEveryMs = options.lastSeenEveryMs ?? 300_000;
  return {
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 30_000,
    missedHeartbeats: options.missedHeartbeats ?? 3,
    ackTimeoutMs: options.ackTimeoutMs ?? 60_000,
    sweepIntervalMs: options.sweepIntervalMs ?? 5_000,
    retryBaseMs: options.retryBaseMs ?? 5_000,
    retryMaxMs: options.retryMaxMs ?? 600_000,
    maxBufferedBytes: options.maxBufferedBytes ?? 1024 * 1024,
    backpressureGraceMs: options.backpressureGraceMs ?? 30_000,
    maxInboundBytes: options.maxInboundBytes ?? 64 * 1024,
    deliveryBatch: options.deliveryBatch ?? 100,
    presenceFlushMs: options.presenceFlushMs ?? 250,
    presenceBatch: options.presenceBatch ?? 1000,
    lastSeenEveryMs,
    staleAfterMs: options.staleAfterMs ?? 3 * lastSeenEveryMs,
    maxPendingHandshakes: options.maxPendingHandshakes ?? 200,
    proofTimeoutMs: options.proofTimeoutMs ?? 10_000,
  };
}
