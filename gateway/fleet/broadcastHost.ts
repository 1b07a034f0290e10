/**
 * The broadcast actor host — the durable phase driver. Creating a broadcast writes its row
 * and first snapshot; stepping one locks the row (the only writer of a broadcast is the
 * gateway holding that lock; the periodic driver skips rows another gateway is stepping),
 * restores the snapshot, applies the operator's event if any, and then drives: launch the
 * phase the machine asks for (pick its devices deterministically and create their commands,
 * launchBroadcastPhase.ts), report the phase's command counts, let the clock move it to the
 * next phase, until the machine is content. A halt on failures or a cancel stops the
 * undelivered commands. Status, phase, counts and snapshot are written back and the
 * gateways notified, in the same transaction — so a gateway that dies mid-step leaves the
 * previous state, and a restarted one continues from the row.
 */
import { randomUUID } from 'node:crypto';
import { notifyCommands, type CloudStore, type CloudHandle } from '../../runtime/index.js';
import {
  appendCommandAudit,
  type CommandAuditEntry,
} from '../commands/store/commands/appendCommandAudit.js';
import { cancelPendingCommands } from '../commands/store/commands/cancelPendingCommands.js';
import { type CommandActor, type CommandRecord } from '../commands/store/commands/command.js';
import { type BroadcastRecord } from './store/broadcasts/broadcast.js';
import {
  countBroadcastCommands,
  type BroadcastCommandCount,
} from './store/broadcasts/countBroadcastCommands.js';
import { countTargetDevices } from './store/broadcasts/countTargetDevices.js';
import { getBroadcast } from './store/broadcasts/getBroadcast.js';
import { insertBroadcast } from './store/broadcasts/insertBroadcast.js';
import { launchBroadcastPhase } from './store/broadcasts/launchBroadcastPhase.js';
import { lockBroadcast } from './store/broadcasts/lockBroadcast.js';
import { saveBroadcast } from './store/broadcasts/saveBroadcast.js';
import type { BroadcastPhaseStats } from '../../actors/index.js';
import {
  bcEvents,
  type BroadcastEvent,
  broadcastStatusOf,
  initialBroadcastSnapshot,
  nextBroadcastSnapshot,
  persistBroadcastSnapshot,
  restoreBroadcastSnapshot,
  type BroadcastSnapshot,
  type BroadcastStatus,
} from '../../actors/index.js';
import { toDeviceTargetFilter, type BroadcastTarget } from './broadcastTarget.js';

/** A broadcast to create. */
export interface BroadcastSpec {
  commandType: string;
  payload: unknown;
  maxRetries: number;
  /** Lifetime of each command from its phase's start; null: until delivered and acked. */
  expiresInSeconds: number | null;
  target: BroadcastTarget;
  /** Cumulative percentages, strictly increasing, the last 100. */
  phases: number[];
  waitSeconds: number;
  /** Failure rate (0–1) above which a phase halts the broadcast; null: never. */
  failureThreshold: number | null;
  /** The broadcast's id when one was reserved for it (a broadcast held for approval). */
  broadcastId?: string;
  /** The command version the payload was validated against (null or absent: none registered). */
  commandVersion?: string | null;
}

const TERMINAL: ReadonlySet<string> = new Set(['COMPLETED', 'CANCELLED']);

/** The command version a broadcast's rollout records (null for none, or one made before versions). */
function commandVersionOf(rollout: unknown): string | null {
  const version = (rollout as { command_version?: unknown } | null)?.command_version;
  return typeof version === 'string' ? version : null;
}

/** True for a broadcast status that no longer changes. */
export function isTerminalBroadcastStatus(status: string): boolean {
  return TERMINAL.has(status);
}

/** Insert a new broadcast (PENDING, nothing sent yet); call inside a transaction. */
export async function insertNewBroadcast(
  h: CloudHandle,
  spec: BroadcastSpec,
  actor: CommandActor,
  now: Date,
  ids: () => string = randomUUID,
): Promise<BroadcastRecord> {
  const snapshot = initialBroadcastSnapshot({
    phases: spec.phases,
    waitSeconds: spec.waitSeconds,
    threshold: spec.failureThreshold,
    maxRetries: spec.maxRetries,
    expiresInSeconds: spec.expiresInSeconds,
    total: 0,
    phase: 0,
    nextPhaseAt: null,
    haltReason: null,
    overridePhase: null,
    history: [],
  });
  return insertBroadcast(
    h,
    {
      broadcastId: spec.broadcastId ?? ids(),
      commandType: spec.commandType,
      payload: spec.payload,
      targetFilter: spec.target,
      rollout: {
        phases: spec.phases,
        wait_seconds: spec.waitSeconds,
        max_retries: spec.maxRetries,
        expires_in_seconds: spec.expiresInSeconds,
        ...(spec.commandVersion ? { command_version: spec.commandVersion } : {}),
      },
      failureThreshold: spec.failureThreshold,
      actorSnapshot: persistBroadcastSnapshot(snapshot),
    },
    actor,
    now,
  );
}

/** Options of {@link stepBroadcast}. */
export interface BroadcastStepOptions {
  now: Date;
  /** Who applies the step: the audit actor of created and cancelled commands. */
  actor: CommandActor;
  /** This gateway's id in command notifications. */
  origin: string;
  /** Skip (undefined) rather than wait when another gateway is stepping the broadcast. */
  skipLocked?: boolean;
  /**
   * This gateway's idle device sockets: a phase creates their commands DELIVERED, for the
   * caller to push (`BroadcastStep.delivered`). Read only when a phase launches.
   */
  sockets?: { readonly actor: CommandActor; idleDevices(): string[] };
}

/** What a step did. */
export interface BroadcastStep {
  broadcast: BroadcastRecord;
  snapshot: BroadcastSnapshot;
  previousStatus: BroadcastStatus;
  /** Devices that got the command PENDING in this step: wake them. */
  woken: string[];
  /** Commands this step created DELIVERED (to `options.sockets`): push them. */
  delivered: CommandRecord[];
}

function phaseStats(counts: readonly BroadcastCommandCount[], phase: number): BroadcastPhaseStats {
  const stats: BroadcastPhaseStats = {
    pending: 0,
    delivered: 0,
    executed: 0,
    failed: 0,
    cancelled: 0,
  };
  for (const c of counts) {
    if (c.phase !== phase) continue;
    if (c.status === 'PENDING') stats.pending += c.count;
    else if (c.status === 'DELIVERED') stats.delivered += c.count;
    else if (c.status === 'EXECUTED') stats.executed += c.count;
    else if (c.status === 'FAILED') stats.failed += c.count;
    else if (c.status === 'CANCELLED') stats.cancelled += c.count;
  }
  return stats;
}

const sum = (counts: readonly BroadcastCommandCount[], status?: string) =>
  counts.reduce((n, c) => (status === undefined || c.status === status ? n + c.count : n), 0);

/** Cumulative devices phase `phase` reaches (the last phase: everything left, so null). */
function phaseLimit(snapshot: BroadcastSnapshot, already: number): number | null {
  const { phases, phase, total } = snapshot.context;
  if (phase >= phases.length) return null;
  const percent = phases[phase - 1]!;
  return Math.max(0, Math.ceil((percent * total) / 100 - 1e-9) - already);
}

/**
 * Apply `event` (or nothing: just reconcile and let the clock act) to broadcast
 * `broadcastId`; undefined when it does not exist or — with `skipLocked` — another gateway
 * is stepping it.
 */
export async function stepBroadcast(
  store: CloudStore,
  broadcastId: string,
  event: BroadcastEvent | undefined,
  options: BroadcastStepOptions,
): Promise<BroadcastStep | undefined> {
  const { now, actor } = options;
  return store.transaction(async (tx) => {
    const row = await lockBroadcast(tx, broadcastId, { skipLocked: options.skipLocked ?? false });
    if (!row) return undefined;
    const filter = toDeviceTargetFilter(row.targetFilter);
    let snapshot = restoreBroadcastSnapshot(row.actorSnapshot, broadcastId);
    const storedJson = JSON.stringify(row.actorSnapshot);
    const previousStatus = broadcastStatusOf(snapshot);
    const audit = (entry: CommandAuditEntry) => appendCommandAudit(tx, actor, [entry], now);
    const woken: string[] = [];
    const delivered: CommandRecord[] = [];
    if (event?.type === 'bc.start') {
      if (snapshot.value === 'pending')
        snapshot = nextBroadcastSnapshot(
          snapshot,
          bcEvents.start(now, await countTargetDevices(tx, filter)),
        );
    } else if (event) snapshot = nextBroadcastSnapshot(snapshot, event);
    if (previousStatus === 'HALTED' && snapshot.value === 'running')
      await audit({
        event: 'BROADCAST_RESUMED',
        broadcastId,
        details: { phase: snapshot.context.phase },
      });

    let counts = await countBroadcastCommands(tx, broadcastId);
    // each round launches at most one phase; a phase that reaches nobody settles at once
    for (let round = 0; round <= snapshot.context.phases.length + 1; round++) {
      if (snapshot.value === 'launching') {
        const phase = snapshot.context.phase;
        const sockets = options.sockets;
        const launched = await launchBroadcastPhase(
          tx,
          {
            broadcastId,
            phase,
            filter,
            limit: phaseLimit(snapshot, sum(counts)),
            commandType: row.commandType,
            payload: row.payload,
            maxRetries: snapshot.context.maxRetries,
            expiresAt:
              snapshot.context.expiresInSeconds === null
                ? null
                : new Date(now.getTime() + snapshot.context.expiresInSeconds * 1000),
            createdBy: row.createdBy,
            commandVersion: commandVersionOf(row.rollout),
            ...(sockets
              ? { deliverTo: { deviceIds: sockets.idleDevices(), deliverer: sockets.actor } }
              : {}),
          },
          actor,
          now,
        );
        const devices = launched.devices;
        for (const command of launched.delivered) delivered.push(command);
        const pushed = new Set(launched.delivered.map((c) => c.deviceId));
        for (const device of devices) if (!pushed.has(device)) woken.push(device);
        snapshot = nextBroadcastSnapshot(snapshot, bcEvents.launched(now, phase, devices.length));
        await audit({
          event: 'BROADCAST_PHASE_STARTED',
          broadcastId,
          details: { phase, percent: snapshot.context.phases[phase - 1], devices: devices.length },
        });
        counts = await countBroadcastCommands(tx, broadcastId);
      }
      if (snapshot.context.phase > 0)
        snapshot = nextBroadcastSnapshot(
          snapshot,
          bcEvents.progress(now, phaseStats(counts, snapshot.context.phase)),
        );
      snapshot = nextBroadcastSnapshot(snapshot, bcEvents.tick(now));
      if (snapshot.value !== 'launching') break;
    }

    let status = broadcastStatusOf(snapshot);
    const stops =
      status !== previousStatus &&
      (status === 'CANCELLED' ||
        (status === 'HALTED' && snapshot.context.haltReason === 'FAILURE_THRESHOLD'));
    let cancelled = 0;
    if (stops) {
      const reason = status === 'CANCELLED' ? 'broadcast cancelled' : 'broadcast halted';
      cancelled = (await cancelPendingCommands(tx, { broadcastId }, actor, reason, now)).length;
      counts = await countBroadcastCommands(tx, broadcastId);
      if (snapshot.context.phase > 0)
        snapshot = nextBroadcastSnapshot(
          snapshot,
          bcEvents.progress(now, phaseStats(counts, snapshot.context.phase)),
        );
      status = broadcastStatusOf(snapshot);
    }

    if (status !== previousStatus) {
      const ctx = snapshot.context;
      const details = {
        status,
        previous_status: previousStatus,
        phase: ctx.phase,
        ...(cancelled > 0 ? { cancelled_pending: cancelled } : {}),
      };
      if (status === 'HALTED')
        await audit({
          event: ctx.haltReason === 'PAUSED' ? 'BROADCAST_PAUSED' : 'BROADCAST_HALTED',
          broadcastId,
          details:
            ctx.haltReason === 'PAUSED'
              ? details
              : { ...details, threshold: ctx.threshold, stats: ctx.history[ctx.phase - 1]?.stats },
        });
      if (status === 'COMPLETED')
        await audit({ event: 'BROADCAST_COMPLETED', broadcastId, details });
      if (status === 'CANCELLED')
        await audit({ event: 'BROADCAST_CANCELLED', broadcastId, details });
    }

    const persisted = persistBroadcastSnapshot(snapshot);
    const succeeded = sum(counts, 'EXECUTED');
    const failed = sum(counts, 'FAILED');
    const totalDevices = Math.max(snapshot.context.total, sum(counts));
    if (
      JSON.stringify(persisted) !== storedJson ||
      succeeded !== row.succeededCount ||
      failed !== row.failedCount ||
      totalDevices !== row.totalDevices
    )
      await saveBroadcast(
        tx,
        broadcastId,
        {
          status,
          currentPhase: snapshot.context.phase,
          totalDevices,
          succeededCount: succeeded,
          failedCount: failed,
          actorSnapshot: persisted,
          completedAt: isTerminalBroadcastStatus(status) ? (row.completedAt ?? now) : null,
        },
        now,
      );
    await notifyCommands(tx, woken, options.origin);
    const broadcast = (await getBroadcast(tx, broadcastId))!;
    return { broadcast, snapshot, previousStatus, woken, delivered };
  });
}
