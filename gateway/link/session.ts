/**
 * One device's WebSocket session (protocol: frames.ts). Work on a session — answering
 * frames, handing out commands — runs one piece at a time in arrival order, so an ack never
 * overtakes the hello before it. The device's connect and disconnect go to the gateway's
 * presence writer (presence.ts) at once, in that order, and are written behind.
 *
 * Delivery: commands are marked DELIVERED in the database before they are written to the
 * socket, so a connection that drops mid-write loses nothing — the command is pushed again
 * on the next hello, or retried after the ack timeout. The device deduplicates by
 * `command_id`.
 *
 * Back-pressure: a device that reads slowly makes `bufferedAmount` (bytes queued in the
 * socket) grow. Above `maxBufferedBytes` nothing more is pushed — commands stay PENDING in
 * the database, not in memory — and delivery resumes once the queue drains below half the
 * cap. A socket above the cap on which no write has completed for `backpressureGraceMs`
 * (the device stopped reading) is closed with 1013, then terminated if the close cannot get
 * through. So memory per connection is bounded by the cap plus one delivery batch.
 *
 * Proof: a socket upgraded without a nonce starts unproven (frames.ts): it is sent a
 * challenge and nothing else happens — no presence, no command, no last_seen — until its
 * hello carries a valid proof. Only then is the connection recorded and the session handed
 * to the hub, so a replayed upgrade can neither mark the device online nor displace its
 * real session.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import {
  SOCKET_PROOF_VERSION,
  verifySocketProof,
  type CommandRecord,
} from '../../runtime/index.js';
import { verifyDeviceSecret } from '../auth/authenticate.js';
import type { GatewayContext } from '../context.js';
import { jsonDepth, MAX_DEPTH } from '../jsonBody.js';
import { toProblem } from '../problem.js';
import { acknowledge } from './acknowledge.js';
import type { CommandGroups } from './commandGroups.js';
import { CLOSE, inboundFrame, type InboundFrame, type OutboundFrame } from './frames.js';
import { commandJson } from './present.js';
import type { PresenceWriter } from './presence.js';
import type { DeviceLinkSettings } from './settings.js';

/** Bad frames in a row after which a session is closed. */
const MAX_BAD_FRAMES = 10;

/** A live device session. */
export interface DeviceSession {
  readonly id: string;
  readonly deviceId: string;
  /** Resolves once the session has ended, its work is done and its disconnect is queued. */
  readonly ended: Promise<void>;
  /** Commands may be due: push them (after the hello, and unless back-pressured). */
  wake(): void;
  /**
   * Whether a new command may be created DELIVERED and pushed at once: the device said
   * hello, the resume is done, no delivery is running or wanted, and the socket has room.
   */
  idle(): boolean;
  /** Push a command created DELIVERED for this device (a lost push is redelivered later). */
  pushDelivered(command: CommandRecord): void;
  /**
   * The periodic check: heartbeat, silence, back-pressure — or, before the proof, its
   * deadline only. True when `last_seen` is due.
   */
  tick(nowMs: number): boolean;
  /** Whether the device has proven itself (or came by the deprecated nonce upgrade). */
  proven(): boolean;
  /** Close with `code` (and terminate if that does not complete within a tick). */
  close(code: number, reason: string): void;
  /** Drop the connection at once. */
  terminate(): void;
}

/** What a session needs from its gateway. */
export interface SessionDeps {
  ctx: GatewayContext;
  settings: DeviceLinkSettings;
  /** The gateway's group commit of deliveries and acks (commandGroups.ts). */
  groups: CommandGroups;
  /** Where the device's connect and disconnect are written behind. */
  presence: PresenceWriter;
  sourceIp: string | null;
  /**
   * Challenge the socket and require a proof in the hello (an upgrade without a nonce).
   * Without it the session counts as proven at once (the deprecated nonce upgrade).
   */
  challenge?: boolean;
  /** The device proved itself (called once, before its connect is queued). */
  onProven(session: DeviceSession): void;
  /** The session ended (called once, before its disconnect is queued). */
  onEnd(session: DeviceSession): void;
  /** The handshake is over: the socket is open and its connect queued, or it ended first. */
  onConnected?(): void;
}

/** Serve `socket` for `deviceId`. Attach before any await, so no early frame is missed. */
export function openSession(socket: WebSocket, deviceId: string, deps: SessionDeps): DeviceSession {
  const { ctx, settings } = deps;
  const id = randomUUID();
  const nowMs = () => ctx.now().getTime();
  const log = ctx.app.log;

  let chain: Promise<void> = Promise.resolve();
  const serial = (work: () => Promise<void>): Promise<void> =>
    (chain = chain.then(work).catch((error: unknown) => {
      log.error({ err: error, device_id: deviceId }, 'device session work failed');
    }));

  const openedAt = nowMs();
  // the challenge of an upgrade without a nonce; undefined once proven (or never asked)
  let challenge = deps.challenge ? randomBytes(32).toString('base64url') : undefined;
  let connected = false; // the connect is queued (so its end is queued too)
  let ready = false; // the device said hello
  let over = false; // the socket has ended
  let wantDelivery = false;
  let delivering = false;
  let heardAt = nowMs();
  let touchedAt = heardAt;
  let overCapSince: number | undefined;
  let writtenAt = heardAt; // when a write last completed: progress of a slow reader
  let closingSince: number | undefined;
  let badFrames = 0;
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));

  const send = (frame: OutboundFrame, onWritten?: () => void): void => {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify(frame), (error) => {
      if (error) return;
      writtenAt = nowMs();
      onWritten?.();
    });
  };
  const overCap = () => socket.bufferedAmount > settings.maxBufferedBytes;
  const drained = () => {
    if (wantDelivery && socket.bufferedAmount <= settings.maxBufferedBytes / 2) session.wake();
  };
  const push = (commands: readonly CommandRecord[]) =>
    commands.forEach((c, i) =>
      send(
        { type: 'command', command: commandJson(c) },
        i === commands.length - 1 ? drained : undefined,
      ),
    );

  const writable = () => !over && closingSince === undefined && socket.readyState === socket.OPEN;
  // the resume runs in rounds like any delivery; these it already pushed again
  let resumed = false;
  const redelivered: string[] = [];

  /**
   * Hand out commands — first those a previous connection left unacked, then due PENDING
   * ones — until none are left, the socket is over its cap, or it is closing.
   */
  const deliver = async () => {
    while (wantDelivery && ready && writable()) {
      if (overCap()) return; // resumed by `drained` or the next tick
      wantDelivery = false;
      const limit = settings.deliveryBatch;
      if (!resumed) {
        const changed = await deps.groups.redeliver(deviceId, limit, [...redelivered]);
        for (const c of changed) redelivered.push(c.commandId);
        if (changed.length < limit) resumed = true;
        wantDelivery = true;
        push(changed.filter((c) => c.status === 'DELIVERED'));
        continue;
      }
      // with the other sessions' deliveries of this moment (commandGroups.ts)
      const commands = await deps.groups.deliver(deviceId, limit);
      push(commands);
      if (commands.length === limit) wantDelivery = true; // maybe more
    }
  };
  const deliverExclusively = async () => {
    delivering = true;
    try {
      await deliver();
    } finally {
      delivering = false;
    }
  };

  const connect = () => {
    deps.onProven(session);
    deps.presence.connected(deviceId, id);
    connected = true;
    deps.onConnected?.();
  };

  /** Check the hello's proof; false (and the socket closing) when it fails. */
  const prove = async (proof: string | undefined): Promise<boolean> => {
    const asked = challenge;
    if (asked === undefined) return true;
    const valid =
      proof !== undefined &&
      (await verifyDeviceSecret(ctx.auth, deviceId, nowMs(), (secret) =>
        verifySocketProof(secret, deviceId, asked, proof),
      ));
    if (!valid || over) {
      session.close(CLOSE.badProof, 'the hello must carry a valid proof of the challenge');
      return false;
    }
    challenge = undefined;
    connect();
    return true;
  };

  const hello = async (frame: Extract<InboundFrame, { type: 'hello' }>) => {
    if (!(await prove(frame.proof))) return;
    send({
      type: 'welcome',
      session_id: id,
      heartbeat_interval_ms: settings.heartbeatIntervalMs,
      max_message_bytes: settings.maxInboundBytes,
    });
    if (ready) return; // one resume per session: every redelivery counts as a retry
    ready = true;
    wantDelivery = true;
    await deliverExclusively();
  };

  const ack = async (frame: Extract<InboundFrame, { type: 'ack' }>) => {
    try {
      const done = await acknowledge(
        ctx,
        deps.groups,
        {
          deviceId,
          commandId: frame.command_id,
          status: frame.status,
          ...(frame.result !== undefined ? { result: frame.result } : {}),
          ...(frame.error !== undefined ? { error: frame.error } : {}),
        },
        deps.sourceIp,
      );
      send({
        type: 'acked',
        command_id: frame.command_id,
        status: done.command.status,
        repeated: done.repeated,
      });
    } catch (error) {
      const problem = toProblem(error);
      if (!problem) throw error;
      send({
        type: 'error',
        code: problem.code,
        message: problem.message,
        command_id: frame.command_id,
      });
    }
  };

  const bad = (code: string, message: string) => {
    send({ type: 'error', code, message });
    if (++badFrames >= MAX_BAD_FRAMES) session.close(CLOSE.badFrames, 'too many invalid frames');
  };

  const handle = async (text: string) => {
    if (over) return;
    if (jsonDepth(text) > MAX_DEPTH)
      return bad('FRAME_TOO_DEEP', `frames nest at most ${MAX_DEPTH} levels`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return bad('MALFORMED_FRAME', 'a frame is one JSON object');
    }
    const parsed = inboundFrame.safeParse(value);
    if (!parsed.success)
      return bad(
        'INVALID_FRAME',
        parsed.error.issues
          .slice(0, 5)
          .map((i) => `${['$', ...i.path].join('.')}: ${i.message}`)
          .join('; '),
      );
    badFrames = 0;
    const frame = parsed.data;
    if (challenge !== undefined && frame.type === 'ack')
      return bad('PROOF_REQUIRED', 'say hello with the proof of the challenge first');
    switch (frame.type) {
      case 'hello':
        return hello(frame);
      case 'ack':
        return ack(frame);
      case 'heartbeat':
        return;
      default: {
        const never: never = frame;
        return never;
      }
    }
  };

  const session: DeviceSession = {
    id,
    deviceId,
    ended,
    idle: () => ready && resumed && !delivering && !wantDelivery && writable() && !overCap(),
    pushDelivered(command) {
      if (writable()) push([command]);
    },
    wake() {
      wantDelivery = true;
      if (delivering || !ready || !writable()) return;
      delivering = true; // claimed now, so wakes meanwhile only set wantDelivery
      void serial(deliverExclusively);
    },
    proven: () => challenge === undefined,
    tick(now) {
      if (over) return false;
      if (closingSince !== undefined) {
        if (now - closingSince >= settings.heartbeatIntervalMs) socket.terminate();
        return false;
      }
      if (challenge !== undefined) {
        if (now - openedAt >= settings.proofTimeoutMs)
          session.close(CLOSE.proofTimeout, 'no proof of the challenge in time');
        return false;
      }
      if (now - heardAt > settings.missedHeartbeats * settings.heartbeatIntervalMs) {
        session.close(CLOSE.heartbeatTimeout, 'heartbeat timeout');
        return false;
      }
      if (overCap()) {
        // over the cap is fine while writes complete; a device that stops reading is not
        overCapSince ??= now;
        if (now - Math.max(overCapSince, writtenAt) >= settings.backpressureGraceMs)
          session.close(CLOSE.backpressure, 'the device reads too slowly; reconnect later');
      } else {
        overCapSince = undefined;
        send({ type: 'heartbeat' });
        if (wantDelivery) session.wake();
      }
      if (heardAt > touchedAt && now - touchedAt >= settings.lastSeenEveryMs) {
        touchedAt = now;
        return true;
      }
      return false;
    },
    close(code, reason) {
      if (over || closingSince !== undefined) return;
      closingSince = nowMs();
      socket.close(code, reason);
    },
    terminate() {
      socket.terminate();
    },
  };

  socket.on('message', (data, isBinary) => {
    heardAt = nowMs();
    if (isBinary) return session.close(CLOSE.binary, 'frames are JSON text');
    const bytes = Array.isArray(data)
      ? data.reduce((n, b) => n + b.length, 0)
      : data instanceof ArrayBuffer
        ? data.byteLength
        : data.length;
    if (bytes > settings.maxInboundBytes)
      return session.close(CLOSE.tooLarge, `frames are at most ${settings.maxInboundBytes} bytes`);
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.isBuffer(data)
        ? data.toString('utf8')
        : Buffer.from(data).toString('utf8');
    void serial(() => handle(text));
  });
  socket.on('close', () => {
    if (over) return;
    over = true;
    deps.onConnected?.();
    deps.onEnd(session);
    if (connected) deps.presence.disconnected(deviceId, id);
    void serial(() => Promise.resolve()).then(resolveEnded);
  });
  if (challenge === undefined) connect();
  else send({ type: 'challenge', challenge, version: SOCKET_PROOF_VERSION });
  return session;
}
