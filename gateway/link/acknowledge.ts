/**
 * A device's command ack, shared by `POST …/commands/{command_id}/ack` and the socket's
 * `ack` frame: checked for card data, recorded idempotently with the other acks of its group
 * (commandGroups.ts), failures as problems (404 COMMAND_NOT_FOUND, 409 ACK_CONFLICT).
 *
 * An ack whose result or error looks like it holds a card number in clear is recorded with
 * that part withheld — `{ withheld: 'CARD_DATA_IN_CLEAR', path }` instead of the result, a
 * fixed text instead of the error — rather than refused: the command did run, and a refused
 * ack left it PENDING for good (the device does not send a refused ack again). Nothing of
 * the number is stored, logged or echoed.
 */
import { findClearPan } from '../../runtime/index.js';
import { type CommandAck } from '../commands/store/commands/ackCommands.js';
import { type CommandRecord } from '../commands/store/commands/command.js';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';
import type { CommandGroups } from './commandGroups.js';

/** A recorded ack: the command as it now stands, and whether the ack was a repeat. */
export interface Acknowledged {
  command: CommandRecord;
  repeated: boolean;
}

/** `ack` with any part that looks like it holds a clear card number withheld. */
function withoutCardData(ack: CommandAck): CommandAck {
  const inResult = findClearPan(ack.result ?? null, '$.result');
  const inError = ack.error !== undefined && findClearPan(ack.error, '$.error') !== undefined;
  if (!inResult && !inError) return ack;
  return {
    ...ack,
    ...(inResult ? { result: { withheld: 'CARD_DATA_IN_CLEAR', path: inResult.path } } : {}),
    ...(inError ? { error: 'error text withheld: it looked like it held a card number' } : {}),
  };
}

/** Record `ack` from its device, in `groups`' next group; resolves once it is committed. */
export async function acknowledge(
  ctx: GatewayContext,
  groups: CommandGroups,
  ack: CommandAck,
  sourceIp: string | null,
): Promise<Acknowledged> {
  const outcome = await groups.ack({
    ack: withoutCardData(ack),
    actor: { actor: ack.deviceId, role: 'device', sourceIp },
    now: ctx.now(),
  });
  switch (outcome.kind) {
    case 'not_found':
      throw new Problem(
        404,
        'COMMAND_NOT_FOUND',
        `device ${ack.deviceId} has no command ${ack.commandId}`,
      );
    case 'conflict':
      throw new Problem(
        409,
        'ACK_CONFLICT',
        `command ${ack.commandId} already finished ${outcome.command.status}${outcome.command.error ? ` (${outcome.command.error})` : ''}; this ack disagrees`,
        { status: outcome.command.status },
      );
    case 'acked':
      ctx.commandEvents.acked(outcome.command);
      return { command: outcome.command, repeated: false };
    case 'repeated':
      return { command: outcome.command, repeated: true };
    default: {
      const never: never = outcome;
      return never;
    }
  }
}
