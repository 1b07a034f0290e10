import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { isLatestVersion } from './latestVersion.js';
import { rowToPolicy, type PolicyRecord } from './policy.js';

/** The fraud policies a device receives, and why. */
export interface FraudPolicySelection {
  /**
   * `assigned`: the device has POLICY assignments naming fraud policies, and gets exactly
   * those that are enabled. `fleet_default`: it has none, and gets every enabled fraud policy.
   */
  selection: 'assigned' | 'fleet_default';
  policies: PolicyRecord[];
}

/**
 * The fraud policies (newest versions, by name) for `deviceId`, or the fleet default when no
 * device is given. A device assigned only disabled fraud policies gets none — an assignment
 * is a deliberate restriction, never widened to the fleet default. One query.
 */
export async function selectFraudPolicies(
  h: CloudHandle,
  deviceId: string | undefined,
): Promise<FraudPolicySelection> {
  try {
    const rows = await h.cloud
      .selectFrom('policies')
      .selectAll()
      .select((eb) =>
        eb
          .exists(
            eb
              .selectFrom('device_assignments')
              .select('device_assignments.assignment_id')
              .where('device_assignments.device_id', '=', deviceId ?? '')
              .where('device_assignments.assignment_type', '=', 'POLICY')
              .where('device_assignments.active', '=', h.codec.bool(true))
              .whereRef('device_assignments.target_id', '=', 'policies.name'),
          )
          .as('assigned'),
      )
      .where('policy_type', '=', 'FRAUD')
      .where(isLatestVersion)
      .orderBy('name')
      .execute();
    const assigned =
      deviceId === undefined ? [] : rows.filter((r) => h.codec.parseBool(r.assigned));
    const chosen = assigned.length > 0 ? assigned : rows;
    return {
      selection: assigned.length > 0 ? 'assigned' : 'fleet_default',
      policies: chosen.map((row) => rowToPolicy(h.codec, row)).filter((policy) => policy.enabled),
    };
  } catch (error) {
    throw translateDriverError(error, 'select fraud policies');
  }
}
