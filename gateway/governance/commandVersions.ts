/**
 * Which version of its command type a command is, and whether its payload fits that
 * version's schema. A command names a version (`command_version`) or gets the current one:
 * the newest version that is not deprecated. A command type with no registered version is
 * not checked beyond its built-in payload schema (link/commandTypes.ts), so versioning can be
 * introduced type by type.
 *
 * Deprecation refuses: a command naming a deprecated version is a 422
 * COMMAND_VERSION_DEPRECATED (with the version to use instead, when the deprecation named
 * one), and a type whose every version is deprecated takes no commands until a new version
 * is registered. A warning would let a fleet drift onto a contract its owners have retired;
 * refusing makes the move explicit and costs the caller one field.
 */
import { validateJson, type JsonSchemaIssue, type RiskLevel } from '../../runtime/index.js';
import { type CommandVersionRecord } from './store/commandVersions/index.js';
import { isRiskLevel } from './riskLevel.js';
import { Problem } from '../problem.js';
import { canonicalCommandType, defaultRisk } from './commandRisk.js';
import { compareVersions } from './semver.js';

/** A command as versioning sees it. */
export interface VersionedCommand {
  command_type: string;
  payload: unknown;
  command_version?: string | undefined;
}

/** What versioning decided about a command. */
export interface ResolvedCommand {
  /** The version it was checked against; null when its type has none registered. */
  version: string | null;
  risk: RiskLevel;
}

/** The versions of one type, oldest first. */
export const byVersion = (versions: readonly CommandVersionRecord[]): CommandVersionRecord[] =>
  [...versions].sort((a, b) => compareVersions(a.version, b.version));

/** The current version of a type: the newest not deprecated (undefined when none). */
export const currentVersion = (
  versions: readonly CommandVersionRecord[],
): CommandVersionRecord | undefined =>
  byVersion(versions)
    .filter((v) => !v.deprecated)
    .at(-1);

/**
 * Resolve and check every command against `all`, the registered versions of their types
 * (`pathOf(i)` is where command i sits in the request, for error paths). Throws 422 UNKNOWN_COMMAND_VERSION or COMMAND_VERSION_DEPRECATED for the
 * first command whose version cannot be used, and 422 COMMAND_PAYLOAD_INVALID listing every
 * failing path of every payload.
 */
export function resolveCommandVersions(
  all: readonly CommandVersionRecord[],
  commands: readonly VersionedCommand[],
  pathOf: (index: number) => string,
): ResolvedCommand[] {
  const issues: JsonSchemaIssue[] = [];
  const resolved = commands.map((command, i): ResolvedCommand => {
    const type = canonicalCommandType(command.command_type);
    const versions = all.filter((v) => v.commandType === type);
    const base = pathOf(i);
    const fallbackRisk = defaultRisk(type);
    if (versions.length === 0) {
      if (command.command_version !== undefined)
        throw new Problem(
          422,
          'UNKNOWN_COMMAND_VERSION',
          `${type} has no registered versions; leave out command_version`,
          { errors: [{ path: `${base}.command_version`, message: 'no such version' }] },
        );
      return { version: null, risk: fallbackRisk };
    }
    let chosen: CommandVersionRecord | undefined;
    if (command.command_version !== undefined) {
      chosen = versions.find((v) => v.version === command.command_version);
      if (!chosen)
        throw new Problem(
          422,
          'UNKNOWN_COMMAND_VERSION',
          `${type} has no version ${command.command_version}`,
          {
            errors: [{ path: `${base}.command_version`, message: 'no such version' }],
            command_type: type,
            available_versions: byVersion(versions).map((v) => v.version),
          },
        );
      if (chosen.deprecated)
        throw new Problem(
          422,
          'COMMAND_VERSION_DEPRECATED',
          `${type} ${chosen.version} is deprecated` +
            (chosen.replacedBy ? `; use ${chosen.replacedBy}` : ''),
          {
            errors: [{ path: `${base}.command_version`, message: 'this version is deprecated' }],
            command_type: type,
            replaced_by: chosen.replacedBy,
          },
        );
    } else {
      chosen = currentVersion(versions);
      if (!chosen)
        throw new Problem(
          422,
          'COMMAND_VERSION_DEPRECATED',
          `every version of ${type} is deprecated; register a new version first`,
          { errors: [{ path: `${base}.command_type`, message: 'no current version' }] },
        );
    }
    issues.push(...validateJson(chosen.payloadSchema, command.payload, `${base}.payload`));
    return {
      version: chosen.version,
      risk: isRiskLevel(chosen.riskLevel) ? chosen.riskLevel : fallbackRisk,
    };
  });
  if (issues.length > 0)
    throw new Problem(
      422,
      'COMMAND_PAYLOAD_INVALID',
      `the payload does not fit its command version: ${issues
        .slice(0, 5)
        .map((i) => `${i.path}: ${i.message}`)
        .join('; ')}`,
      { errors: issues.slice(0, 50) },
    );
  return resolved;
}
