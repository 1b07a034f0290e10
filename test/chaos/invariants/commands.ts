/**
 * Commands under chaos: every command the cloud created was executed at most once and acked.
 * Three sources are compared — the cloud's `device_commands` rows, each device's command
 * ledger (`edge_sync_state` `command:<id>`: RUNNING before the handler, DONE with the
 * outcome, `acked_at` once the cloud confirmed the ack), and the agents' own log of each
 * handler run (`edge.commands.executed`, reported by the hosts). A command is fine when the
 * cloud holds the device's outcome, the ledger says DONE with that outcome and acked, and
 * the agents logged at most one run of it.
 */
import type { CloudStore } from '../../../runtime/index.js';
import type { DeviceFacts } from './deviceFiles.js';
import { invariant, Violations, type InvariantResult } from './invariant.js';

/** A device_commands row as the checks read it. */
export interface CommandRow {
  command_id: string;
  device_id: string;
  command_type: string;
  status: string;
  broadcast_id: string | null;
  delivered_at: unknown;
}

/** The command rows of the run. */
export async function readCommands(store: CloudStore): Promise<CommandRow[]> {
  return store.cloud
    .selectFrom('device_commands')
    .select(['command_id', 'device_id', 'command_type', 'status', 'broadcast_id', 'delivered_at'])
    .execute();
}

/** Check the command invariant. */
export function checkCommands(
  commands: readonly CommandRow[],
  facts: readonly DeviceFacts[],
  executions: ReadonlyMap<string, number>,
): InvariantResult {
  const v = new Violations();
  const ledgers = new Map(facts.map((f) => [f.deviceId, f.ledger]));
  const known = new Set<string>();
  const byStatus: Record<string, number> = {};
  let acked = 0;
  let broadcast = 0;
  const failedWith = new Map<string, number>();
  for (const c of commands) {
    known.add(`${c.device_id}|${c.command_id}`);
    byStatus[c.status] = (byStatus[c.status] ?? 0) + 1;
    if (c.broadcast_id) broadcast++;
    const runs = executions.get(`${c.device_id}|${c.command_id}`) ?? 0;
    if (runs > 1) v.add('executed more than once', `${c.command_id} on ${c.device_id} ×${runs}`);
    const entry = ledgers.get(c.device_id)?.get(c.command_id);
    if (c.status === 'PENDING' || c.status === 'DELIVERED') {
      v.add('never answered', `${c.command_id} (${c.status})`);
      continue;
    }
    if (!entry) {
      v.add('closed by the cloud without reaching the device', `${c.command_id} (${c.status})`);
      continue;
    }
    if (entry.state !== 'DONE') {
      v.add('left RUNNING on the device', c.command_id);
      continue;
    }
    if (entry.status === 'FAILED') {
      const code = (entry.error ?? '?').split(':')[0]!;
      failedWith.set(code, (failedWith.get(code) ?? 0) + 1);
    }
    if (entry.status !== c.status)
      v.add(
        'device outcome differs from the cloud',
        `${c.command_id}: ${entry.status} vs ${c.status}`,
      );
    else if (!entry.acked_at) v.add('ack not confirmed to the device', c.command_id);
    else acked++;
  }
  for (const device of facts)
    for (const id of device.ledger.keys())
      if (!known.has(`${device.deviceId}|${id}`))
        v.add('ran a command the cloud does not know', `${id} on ${device.deviceId}`);
  const logged = [...executions.values()].reduce((n, x) => n + x, 0);
  return invariant(
    'every command executed at most once and acked',
    {
      commands: commands.length,
      from_broadcast: broadcast,
      ...Object.fromEntries(Object.entries(byStatus).map(([s, n]) => [`status_${s}`, n])),
      acked_and_matching: acked,
      handler_runs_logged: logged,
      max_runs_of_one_command: Math.max(0, ...executions.values()),
      ...(failedWith.size > 0
        ? { device_failures: [...failedWith].map(([code, n]) => `${code} ×${n}`).join(', ') }
        : {}),
    },
    v,
  );
}
