/**
 * The terminal's database files readable by the agent's user alone. SQLite creates the
 * database with the process's umask (0644 on most systems) and gives its `-wal` and `-shm`
 * files the mode of the database file, so the agent creates the database itself, mode 0600,
 * before SQLite opens it, and narrows files an older version left wider. Its folder, when
 * the agent creates it, is 0700. The process's umask is not touched: it is shared with
 * everything else the process does.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/** Mode of the files that hold the terminal's data and secrets. */
const PRIVATE_FILE_MODE = 0o600;
/** Mode of a folder the agent creates for them. */
const PRIVATE_DIR_MODE = 0o700;

/** The files SQLite keeps for the database `file`. */
const databaseFiles = (file: string) => [file, `${file}-wal`, `${file}-shm`];

/**
 * Create the folder (0700) and the database file (0600) of `file` when missing, and set
 * 0600 on the database's files that exist already. `:memory:` is left alone.
 */
export function prepareDatabaseFiles(file: string): void {
  if (file === ':memory:') return;
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  for (const path of databaseFiles(file)) if (existsSync(path)) chmodSync(path, PRIVATE_FILE_MODE);
}
