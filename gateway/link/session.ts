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
 * Leaving quiet: a session knows, as it ends, whether its device has anything to resume —
 * the hello's resume is done, no delivery is running or wanted, and every command it pushed
 * was acked on it. Then it leaves the device quiet (quietDevices.ts), so the device's next
 * hello on this gateway runs no statement: a fleet reconnecting after a network blip costs
 * the handshakes alone. The entry is opened as the socket ends, so anything that makes a
 * command deliverable afterwards spoils it, and is kept only once the session's last work
 * is done. A session that leaves commands it pushed unacked says so to the other gateways
 * (`host.leftUnacked`), which drop their own entry for the device.
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
 *
 * Heartbeats: the hub visits each session once per `heartbeatIntervalMs` (hub.ts), and a
 * visit sends a heartbeat only when no write to the socket completed in the last half
 * interval — the rule the device keeps too. So the gap between two frames to a device stays
 * under one and a half intervals, far inside the three the device allows, and a fleet that
 * has just connected is not sent a heartbeat seconds after each welcome.
 *
 * Memory: a gateway holds tens of thousands of idle sessions, so a session is one object of
 * plain fields whose behaviour lives on the class's prototype, and the socket's listeners
 * are shared functions that find their session on the socket — no closures per session.
 */
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import {
  newSocketChallenge,
  SOCKET_PROOF_VERSION,
  verifySocketProof,
} from '../../runtime/index.js';
import { type CommandRecord } from '../commands/store/commands/command.js';
import { verifyDeviceSecret } from '../auth/authenticate.js';
import type { GatewayContext } from '../context.js';
import { jsonDepth, MAX_DEPTH } from '../jsonBody.js';
import { toProblem } from '../problem.js';
import { acknowledge } from './acknowledge.js';
import type { CommandGroups } from './commandGroups.js';
import { CLOSE, inboundFrame, type InboundFrame, type OutboundFrame } from './frames.js';
import type { CommandSigner } from './commandSigner.js';
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

/** What every session of a gateway shares (one object per hub). */
export interface SessionHost {
  ctx: GatewayContext;
  settings: DeviceLinkSettings;
  /** The gateway's group commit of deliveries and acks (commandGroups.ts). */
  groups: CommandGroups;
  /** Signs each command pushed (commandSigner.ts). */
  signer: CommandSigner;
  /** Where the device's connect and disconnect are written behind. */
  presence: PresenceWriter;
  /** A session's device proved itself (called once, before its connect is queued). */
  onProven(session: DeviceSession): void;
  /** A session ended (called once, before its disconnect is queued). */
  onEnd(session: DeviceSession): void;
  /** An ended session's work is done (called once, as its `ended` resolves). */
  onSettled(session: DeviceSession): void;
  /** An ended session left commands it pushed unacked: the device has something to resume. */
  leftUnacked(deviceId: string): void;
}

/** What one session is opened with besides its socket and device. */
export interface SessionOptions {
  /**
   * Where the device's socket comes from (its TCP socket), for the audit rows of its acks.
   * The address is read when first needed, not at the upgrade: reading it is a system call,
   * and the handshake is what a reconnecting fleet waits on.
   */
  peer: { readonly remoteAddress?: string | undefined };
  /**
   * Challenge the socket and require a proof in the hello (an upgrade without a nonce).
   * Without it the session counts as proven at once (the deprecated nonce upgrade).
   */
  challenge?: boolean;
  /** The handshake is over: the socket is open and its connect queued, or it ended first. */
  onConnected?: () => void;
}

/** The session a socket serves, for the shared listeners. */
const SESSION = Symbol('saffron.session');
type ServedSocket = WebSocket & { [SESSION]?: Session };

function onSocketMessage(this: ServedSocket, data: WebSocket.RawData, isBinary: boolean): void {
  this[SESSION]?.received(data, isBinary);
}

function onSocketClose(this: ServedSocket): void {
  this[SESSION]?.closed();
}

/** Serve `socket` for `deviceId`. Attach before any await, so no early frame is missed. */
export function openSession(
  socket: WebSocket,
  deviceId: string,
  host: SessionHost,
  options: SessionOptions,
): DeviceSession {
  return new Session(socket, deviceId, host, options);
}

class Session implements DeviceSession {
  readonly id = randomUUID();
  readonly ended: Promise<void>;
  private resolveEnded!: () => void;
  private chain: Promise<void> = Promise.resolve();
  private readonly peer: SessionOptions['peer'];
  /** The device's address once read (null when the socket could not tell). */
  private sourceIp: string | null | undefined = undefined;
  /** Called once the handshake is over; dropped then. */
  private onConnected: (() => void) | undefined;
  /** The challenge of an upgrade without a nonce; undefined once proven (or never asked). */
  private challenge: string | undefined;
  private readonly openedAt: number;
  private connected = false; // the connect is queued (so its end is queued too)
  private ready = false; // the device said hello
  private over = false; // the socket has ended
  private wantDelivery = false;
  private delivering = false;
  private heardAt: number;
  private touchedAt: number;
  private overCapSince: number | undefined = undefined;
  private writtenAt: number; // when a write last completed: progress of a slow reader
  private closingSince: number | undefined = undefined;
  private badFrames = 0;
  /** The resume runs in rounds like any delivery; these it already pushed again. */
  private resumed = false;
  private redelivered: string[] | undefined = undefined;
  /** Commands pushed (or meant to be) and not acked on this socket; undefined when none. */
  private unacked: Set<string> | undefined = undefined;
  /** The quiet entry opened as the socket ended (quietDevices.ts), if the device was proven. */
  private leaving: number | undefined = undefined;

  constructor(
    private readonly socket: ServedSocket,
    readonly deviceId: string,
    private readonly host: SessionHost,
    options: SessionOptions,
  ) {
    this.peer = options.peer;
    this.onConnected = options.onConnected;
    this.challenge = options.challenge ? newSocketChallenge() : undefined;
    this.openedAt = this.heardAt = this.touchedAt = this.writtenAt = this.nowMs();
    this.ended = new Promise<void>((resolve) => (this.resolveEnded = resolve));
    socket[SESSION] = this;
    socket.on('message', onSocketMessage);
    socket.on('close', onSocketClose);
    if (this.challenge === undefined) this.connect();
    else this.send({ type: 'challenge', challenge: this.challenge, version: SOCKET_PROOF_VERSION });
  }

  private nowMs(): number {
    return this.host.ctx.now().getTime();
  }

  /** Run `work` after the session's earlier work, in arrival order. */
  private serial(work: () => Promise<void>): Promise<void> {
    return (this.chain = this.chain.then(work).catch((error: unknown) => {
      this.host.ctx.app.log.error(
        { err: error, device_id: this.deviceId },
        'device session work failed',
      );
    }));
  }

  private handshakeOver(): void {
    const done = this.onConnected;
    this.onConnected = undefined;
    done?.();
  }

  private send(frame: OutboundFrame, onWritten?: () => void): void {
    const socket = this.socket;
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify(frame), (error) => {
      if (error) return;
      this.writtenAt = this.nowMs();
      onWritten?.();
    });
  }

  /**
   * The device's address: read at the first frame after the hello (an ack then finds it even
   * if its socket has ended by the time the ack's turn comes), or by an ack that came sooner.
   */
  private address(): string | null {
    return (this.sourceIp ??= this.peer.remoteAddress ?? null);
  }

  private overCap(): boolean {
    return this.socket.bufferedAmount > this.host.settings.maxBufferedBytes;
  }

  private drained(): void {
    if (this.wantDelivery && this.socket.bufferedAmount <= this.host.settings.maxBufferedBytes / 2)
      this.wake();
  }

  /** Write `commands`, each DELIVERED to this device; each counts as unacked until its ack. */
  private push(commands: readonly CommandRecord[]): void {
    if (commands.length === 0) return;
    const unacked = (this.unacked ??= new Set());
    commands.forEach((c, i) => {
      unacked.add(c.commandId);
      this.send(
        { type: 'command', command: this.host.signer.delivered(c) },
        i === commands.length - 1 ? () => this.drained() : undefined,
      );
    });
  }

  private writable(): boolean {
    return (
      !this.over && this.closingSince === undefined && this.socket.readyState === this.socket.OPEN
    );
  }

  /**
   * Hand out commands — first those a previous connection left unacked, then due PENDING
   * ones — until none are left, the socket is over its cap, or it is closing.
   */
  private async deliver(): Promise<void> {
    const { groups, settings } = this.host;
    while (this.wantDelivery && this.ready && this.writable()) {
      if (this.overCap()) return; // resumed by `drained` or the next tick
      this.wantDelivery = false;
      const limit = settings.deliveryBatch;
      if (!this.resumed) {
        const redelivered = (this.redelivered ??= []);
        const changed = await groups.redeliver(this.deviceId, limit, [...redelivered]);
        for (const c of changed) redelivered.push(c.commandId);
        if (changed.length < limit) {
          this.resumed = true;
          this.redelivered = undefined;
        }
        this.wantDelivery = true;
        this.push(changed.filter((c) => c.status === 'DELIVERED'));
        continue;
      }
      // with the other sessions' deliveries of this moment (commandGroups.ts)
      const commands = await groups.deliver(this.deviceId, limit);
      this.push(commands);
      if (commands.length === limit) this.wantDelivery = true; // maybe more
    }
  }

  private async deliverExclusively(): Promise<void> {
    this.delivering = true;
    try {
      await this.deliver();
    } finally {
      this.delivering = false;
    }
  }

  private connect(): void {
    this.host.onProven(this);
    this.host.presence.connected(this.deviceId, this.id);
    this.connected = true;
    this.handshakeOver();
  }

  /** Check the hello's proof; false (and the socket closing) when it fails. */
  private async prove(proof: string | undefined): Promise<boolean> {
    const asked = this.challenge;
    if (asked === undefined) return true;
    const deviceId = this.deviceId;
    const valid =
      proof !== undefined &&
      (await verifyDeviceSecret(this.host.ctx.auth, deviceId, this.nowMs(), (secret) =>
        verifySocketProof(secret, deviceId, asked, proof),
      ));
    if (!valid || this.over) {
      this.close(CLOSE.badProof, 'the hello must carry a valid proof of the challenge');
      return false;
    }
    this.challenge = undefined;
    this.connect();
    return true;
  }

  private async hello(frame: Extract<InboundFrame, { type: 'hello' }>): Promise<void> {
    if (!(await this.prove(frame.proof))) return;
    const settings = this.host.settings;
    this.send({
      type: 'welcome',
      session_id: this.id,
      heartbeat_interval_ms: settings.heartbeatIntervalMs,
      max_message_bytes: settings.maxInboundBytes,
    });
    if (this.ready) return; // one resume per session: every redelivery counts as a retry
    this.ready = true;
    // read with its credentials on the upgrade: nothing to resume, and nothing since
    if (this.host.ctx.quietDevices.take(this.deviceId)) {
      this.resumed = true;
      return;
    }
    this.wantDelivery = true;
    await this.deliverExclusively();
  }

  private async ack(frame: Extract<InboundFrame, { type: 'ack' }>): Promise<void> {
    try {
      const done = await acknowledge(
        this.host.ctx,
        this.host.groups,
        {
          deviceId: this.deviceId,
          commandId: frame.command_id,
          status: frame.status,
          ...(frame.result !== undefined ? { result: frame.result } : {}),
          ...(frame.error !== undefined ? { error: frame.error } : {}),
        },
        this.address(),
      );
      if (this.unacked?.delete(frame.command_id) && this.unacked.size === 0)
        this.unacked = undefined;
      this.send({
        type: 'acked',
        command_id: frame.command_id,
        status: done.command.status,
        repeated: done.repeated,
      });
    } catch (error) {
      const problem = toProblem(error);
      if (!problem) throw error;
      this.send({
        type: 'error',
        code: problem.code,
        message: problem.message,
        command_id: frame.command_id,
      });
    }
  }

  private bad(code: string, message: string): void {
    this.send({ type: 'error', code, message });
    if (++this.badFrames >= MAX_BAD_FRAMES) this.close(CLOSE.badFrames, 'too many invalid frames');
  }

  private async handle(text: string): Promise<void> {
    if (this.over) return;
    if (jsonDepth(text) > MAX_DEPTH)
      return this.bad('FRAME_TOO_DEEP', `frames nest at most ${MAX_DEPTH} levels`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.bad('MALFORMED_FRAME', 'a frame is one JSON object');
    }
    const parsed = inboundFrame.safeParse(value);
    if (!parsed.success)
      return this.bad(
        'INVALID_FRAME',
        parsed.error.issues
          .slice(0, 5)
          .map((i) => `${['$', ...i.path].join('.')}: ${i.message}`)
          .join('; '),
      );
    this.badFrames = 0;
    const frame = parsed.data;
    if (this.challenge !== undefined && frame.type === 'ack')
      return this.bad('PROOF_REQUIRED', 'say hello with the proof of the challenge first');
    switch (frame.type) {
      case 'hello':
        return this.hello(frame);
      case 'ack':
        return this.ack(frame);
      case 'heartbeat':
        return;
      default: {
        const never: never = frame;
        return never;
      }
    }
  }

  /** A message arrived on the socket. */
  received(data: WebSocket.RawData, isBinary: boolean): void {
    this.heardAt = this.nowMs();
    if (isBinary) return this.close(CLOSE.binary, 'frames are JSON text');
    const max = this.host.settings.maxInboundBytes;
    const bytes = Array.isArray(data)
      ? data.reduce((n, b) => n + b.length, 0)
      : data instanceof ArrayBuffer
        ? data.byteLength
        : data.length;
    if (bytes > max) return this.close(CLOSE.tooLarge, `frames are at most ${max} bytes`);
    if (this.ready) this.address();
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.isBuffer(data)
        ? data.toString('utf8')
        : Buffer.from(data).toString('utf8');
    void this.serial(() => this.handle(text));
  }

  /** The socket has ended. */
  closed(): void {
    if (this.over) return;
    this.over = true;
    this.handshakeOver();
    this.host.onEnd(this);
    if (this.connected) {
      this.host.presence.disconnected(this.deviceId, this.id);
      this.leaving = this.host.ctx.quietDevices.reading([this.deviceId]);
    }
    void this.serial(() => Promise.resolve()).then(() => {
      this.leave();
      this.host.onSettled(this);
      this.resolveEnded();
    });
  }

  /** The session's work is done: leave the device quiet if it has nothing to resume. */
  private leave(): void {
    const read = this.leaving;
    if (read === undefined) return;
    if (this.unacked !== undefined) return this.host.leftUnacked(this.deviceId);
    if (this.ready && this.resumed && !this.wantDelivery)
      this.host.ctx.quietDevices.read(this.deviceId, read, true);
  }

  idle(): boolean {
    return (
      this.ready &&
      this.resumed &&
      !this.delivering &&
      !this.wantDelivery &&
      this.writable() &&
      !this.overCap()
    );
  }

  pushDelivered(command: CommandRecord): void {
    if (this.writable()) this.push([command]);
    else (this.unacked ??= new Set()).add(command.commandId); // not written: left unacked
  }

  wake(): void {
    this.wantDelivery = true;
    if (this.delivering || !this.ready || !this.writable()) return;
    this.delivering = true; // claimed now, so wakes meanwhile only set wantDelivery
    void this.serial(() => this.deliverExclusively());
  }

  proven(): boolean {
    return this.challenge === undefined;
  }

  tick(now: number): boolean {
    const settings = this.host.settings;
    if (this.over) return false;
    if (this.closingSince !== undefined) {
      if (now - this.closingSince >= settings.heartbeatIntervalMs) this.socket.terminate();
      return false;
    }
    if (this.challenge !== undefined) {
      if (now - this.openedAt >= settings.proofTimeoutMs)
        this.close(CLOSE.proofTimeout, 'no proof of the challenge in time');
      return false;
    }
    if (now - this.heardAt > settings.missedHeartbeats * settings.heartbeatIntervalMs) {
      this.close(CLOSE.heartbeatTimeout, 'heartbeat timeout');
      return false;
    }
    if (this.overCap()) {
      // over the cap is fine while writes complete; a device that stops reading is not
      this.overCapSince ??= now;
      if (now - Math.max(this.overCapSince, this.writtenAt) >= settings.backpressureGraceMs)
        this.close(CLOSE.backpressure, 'the device reads too slowly; reconnect later');
    } else {
      this.overCapSince = undefined;
      // the device's own rule: a heartbeat only where the link was otherwise quiet for half an
      // interval — a session visited soon after its welcome, or busy with commands, needs none
      if (now - this.writtenAt >= settings.heartbeatIntervalMs / 2)
        this.send({ type: 'heartbeat' });
      if (this.wantDelivery) this.wake();
    }
    if (this.heardAt > this.touchedAt && now - this.touchedAt >= settings.lastSeenEveryMs) {
      this.touchedAt = now;
      return true;
    }
    return false;
  }

  close(code: number, reason: string): void {
    if (this.over || this.closingSince !== undefined) return;
    this.closingSince = this.nowMs();
    this.socket.close(code, reason);
  }

  terminate(): void {
    this.socket.terminate();
  }
}
