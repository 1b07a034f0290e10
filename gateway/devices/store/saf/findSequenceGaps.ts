/**
 * Gaps in a device's SAF sequence: the device numbers every record it commits, so a number
 * the cloud does not hold between two it does is a record still on the device, rejected,
 * or lost. Reported back to the device after each upload (and useful to operators).
 */
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** An inclusive range of missing sequence numbers. */
export interface SequenceGap {
  from: number;
  to: number;
}

/** Most stored rows one search reads; a wider window is searched up to here only. */
const MAX_ROWS = 10_000;
/** Most gaps reported. */
const MAX_GAPS = 100;

/** The missing sequence numbers of `deviceId` in `[from, to]`, as ranges, lowest first. */
export async function findSequenceGaps(
  h: CloudHandle,
  deviceId: string,
  from: number,
  to: number,
): Promise<SequenceGap[]> {
  if (to < from) return [];
  try {
    const rows = await h.cloud
      .selectFrom('saf_transactions')
      .select('device_sequence')
      .where('device_id', '=', deviceId)
      .where('device_sequence', '>=', from)
      .where('device_sequence', '<=', to)
      .orderBy('device_sequence')
      .limit(MAX_ROWS)
      .execute();
    const gaps: SequenceGap[] = [];
    let expected = from;
    for (const row of rows) {
      const sequence = h.codec.parseInt(row.device_sequence);
      if (sequence > expected) gaps.push({ from: expected, to: sequence - 1 });
      if (gaps.length >= MAX_GAPS) return gaps;
      expected = sequence + 1;
    }
    // past the last stored number: missing up to `to` (unless the search was cut short)
    if (rows.length < MAX_ROWS && expected <= to) gaps.push({ from: expected, to });
    return gaps.slice(0, MAX_GAPS);
  } catch (error) {
    throw translateDriverError(error, `find sequence gaps of device ${deviceId}`);
  }
}
