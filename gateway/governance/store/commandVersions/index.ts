/** Versioned command definitions (command_versions) and their changelog (command_changelog). */
export type { CommandChangelogRecord, CommandVersionRecord } from './commandVersion.js';
export { insertCommandVersion, type NewCommandVersion } from './insertCommandVersion.js';
export {
  deprecateCommandVersion,
  type CommandVersionDeprecation,
} from './deprecateCommandVersion.js';
export { listCommandVersions } from './listCommandVersions.js';
export { listCommandChangelog } from './listCommandChangelog.js';
export { lockCommandType } from './lockCommandType.js';
