/**
 * A device's command ack, shared by `POST …/commands/{command_id}/ack` and the socket's
 * `ack` frame: checked for card data, recorded idempotently, failures as problems
 * (404 COMMAND_NOT_FOUND, 409 ACK_CONFLICT, 422 CARD_DATA_IN_CLEAR).
 */
import {
  ackCommand,
  findClearPan,
  type CommandAck,
  type CommandRecord,
} from '../../runtime/index.js';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';

/** A recorded ack: the command as it now stands, and whether the ack was a repeat. */
export interface Acknowledged {
  command: CommandRecord;
  repeated: boolean;
}

/** Record `ack` from its device. */
export async function acknowledge(
  ctx: GatewayContext,
  ack: CommandAck,
  sourceIp: string | null,
): Promise<Acknowledged> {
  const pan = findClearPan({ result: ack.result ?? null, error: ack.error ?? null });
  if (pan)
    throw new Problem(
      422,
      'CARD_DATA_IN_CLEAR',
      `the ack contains what looks like a card number in clear (at ${pan.path}); it was not recorded`,
    );
  const outcome = await ackCommand(
    ctx.store,
    ack,
    { actor: ack.deviceId, role: 'device', sourceIp },
    ctx.now(),
  );
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
