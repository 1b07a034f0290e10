/**
 * The two signed documents a device pulls (format: runtime/crypto/signedDocument.ts), built
 * without their signature; {@link answerSigned} adds the ETag, the 304 path and the
 * signature.
 *
 * `saffron.device-config.v1` carries the device id (a device never accepts another
 * device's configuration), `version` — `f<fleet>.t<device type>.d<device>`, the version of
 * each layer, 0 where none is published — the layers it was merged from, the device's
 * active assignments, the merged `config` and its `checksum`.
 *
 * `saffron.fraud-rules.v1` carries the device id (null for the fleet default an operator
 * asks for), how the policies were selected, the policies by name and version, and `rules`:
 * every rule of those policies, in policy-name order, each tagged with `policy` and
 * `policy_version`, with its `checksum`.
 */
import { contentChecksum } from '../../runtime/index.js';
import { type AssignmentRecord } from './store/assignments/assignment.js';
import { type ConfigLayerRecord } from './store/configs/configLayer.js';
import { type FraudPolicySelection } from './store/policies/selectFraudPolicies.js';
import { mergeLayers } from './mergeLayers.js';

/** The unsigned device configuration document. */
export function deviceConfigDocument(
  deviceId: string,
  layers: readonly ConfigLayerRecord[],
  assignments: readonly AssignmentRecord[],
): Record<string, unknown> {
  const config = mergeLayers(layers.map((layer) => layer.config));
  const versionOf = (scope: ConfigLayerRecord['scope']) =>
    layers.find((layer) => layer.scope === scope)?.version ?? 0;
  return {
    type: 'saffron.device-config.v1',
    device_id: deviceId,
    version: `f${versionOf('fleet')}.t${versionOf('device_type')}.d${versionOf('device')}`,
    layers: layers.map((layer) => ({
      scope: layer.scope,
      scope_key: layer.scopeKey,
      version: layer.version,
    })),
    assignments: assignments
      .filter((a) => a.active)
      .map((a) => ({
        assignment_type: a.assignmentType,
        target_id: a.targetId,
        parameters: a.parameters,
      })),
    config,
    checksum: contentChecksum(config),
  };
}

/** The unsigned fraud-rules document. */
export function fraudRulesDocument(
  deviceId: string | null,
  selected: FraudPolicySelection,
): Record<string, unknown> {
  const rules = selected.policies.flatMap((policy) =>
    policy.rules.map((rule) => ({
      ...(rule as Record<string, unknown>),
      policy: policy.name,
      policy_version: policy.version,
    })),
  );
  return {
    type: 'saffron.fraud-rules.v1',
    device_id: deviceId,
    selection: selected.selection,
    policies: selected.policies.map((policy) => ({ name: policy.name, version: policy.version })),
    rules,
    checksum: contentChecksum(rules),
  };
}
