/**
 * The range of sequence numbers the device still holds, whatever their status. A resend
 * reports it so an operator can tell records the device can send again from records it no
 * longer has (a re-imaged terminal, rows removed by hand): those gaps cannot be filled from
 * this device.
 */
import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';

/** Lowest and highest sequence number held. */
export interface HeldSequences {
  lowest: number;
  highest: number;
}

/** The held range, or undefined when the device holds no record at all. */
export async function readHeldSequences(h: EdgeHandle): Promise<HeldSequences | undefined> {
  try {
    const row = await h.edge
      .selectFrom('saf_pending_transactions')
      .select((eb) => [
        eb.fn.min('sequence_number').as('lowest'),
        eb.fn.max('sequence_number').as('highest'),
      ])
      .executeTakeFirst();
    if (row?.lowest == null || row.highest == null) return undefined;
    return { lowest: h.codec.parseInt(row.lowest), highest: h.codec.parseInt(row.highest) };
  } catch (error) {
    throw translateDriverError(error, 'read the held SAF sequence numbers');
  }
}
