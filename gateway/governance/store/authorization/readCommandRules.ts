/**
 * What the command gate reads before a command is sent, in one round trip: the registered
 * versions of the command types (registration order) and the enabled authorization
 * policies that may cover them (theirs, or any type; by name, at most 1000) — the same rows
 * as listCommandVersions and listAuthorizationPolicies({enabledOnly, commandTypes}), each
 * set aggregated as one JSON array. Cloud tier only.
 */
import { sql } from 'kysely';
import {
  COMMAND_VERSION_COLUMNS,
  rowToCommandVersion,
  type CommandVersionRecord,
  type CommandVersionRow,
} from '../commandVersions/commandVersion.js';
import { executeCached, translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  AUTHORIZATION_POLICY_COLUMNS,
  rowToAuthorizationPolicy,
  type AuthorizationPolicyRecord,
  type AuthorizationPolicyRow,
} from './authorizationPolicy.js';

/** Most policies a read returns (a read that returns this many may have left some out). */
export const MAX_RULE_POLICIES = 1000;

/** The versions and policies that bear on commands of some types. */
export interface CommandRules {
  versions: CommandVersionRecord[];
  policies: AuthorizationPolicyRecord[];
}

/** The rules for `commandTypes` (see the module comment). */
export async function readCommandRules(
  h: CloudHandle,
  commandTypes: readonly string[],
): Promise<CommandRules> {
  const types = JSON.stringify(commandTypes);
  const columns = (names: readonly string[]) => sql.join(names.map((c) => sql.ref(c)));
  try {
    const { rows } = await executeCached(h, 'readCommandRules', [types, types], () => ({
      compile: () =>
        sql<{ versions: unknown; policies: unknown }>`
          SELECT
            (SELECT coalesce(jsonb_agg(to_jsonb(v) ORDER BY v.created_at, v.id), '[]'::jsonb)
              FROM (SELECT ${columns(COMMAND_VERSION_COLUMNS)} FROM command_versions
                WHERE command_type IN (SELECT jsonb_array_elements_text(CAST(${types} AS jsonb)))) AS v
            ) AS versions,
            (SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.name), '[]'::jsonb)
              FROM (SELECT ${columns(AUTHORIZATION_POLICY_COLUMNS)} FROM authorization_policies
                WHERE enabled AND (command_type IS NULL OR command_type IN
                  (SELECT jsonb_array_elements_text(CAST(${types} AS jsonb))))
                ORDER BY name LIMIT ${sql.lit(MAX_RULE_POLICIES)}) AS p
            ) AS policies`.compile(h.db),
    }));
    const row = rows[0]!;
    const list = <T>(value: unknown) => h.codec.parseJson(value) as T[];
    return {
      versions: list<CommandVersionRow>(row.versions).map((r) => rowToCommandVersion(h.codec, r)),
      policies: list<AuthorizationPolicyRow>(row.policies).map((r) =>
        rowToAuthorizationPolicy(h.codec, r),
      ),
    };
  } catch (error) {
    throw translateDriverError(error, 'read command versions and policies');
  }
}
