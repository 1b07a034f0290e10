/**
 * One process per PGlite data directory. PGlite is an in-process database: a second process
 * that opens the same directory gets its own copy of the database in memory, and what
 * either writes can be lost when the other checkpoints over it — a token `saffron users
 * create` printed was unknown to the `saffron cloud serve` already running there. Every
 * opener takes `<dataDir>.lock` (beside the directory: PGlite refuses to initialise a
 * directory that holds anything else) with its pid; a second opener is refused with who
 * holds it. A lock whose process is gone (a crash, a kill -9) is stale and taken over.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { SaffronError } from '../../errors.js';

/** What the lock file holds. */
interface LockOwner {
  pid: number;
  hostname: string;
  command: string;
  since: string;
}

/** A held lock; `release` removes the file if it is still this process's. */
export interface DataDirLock {
  readonly file: string;
  release(): void;
}

/** The lock file of `dataDir`. */
export const lockFileOf = (dataDir: string): string => `${resolve(dataDir)}.lock`;

function readOwner(file: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' ? (owner as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

function mtimeOf(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Whether the process `pid` exists here (EPERM: it exists, as another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Take the lock of `dataDir` or throw `DATA_DIR_LOCKED` naming the process that holds it.
 * A lock left by a process that no longer runs on this host is taken over.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = lockFileOf(dataDir);
  const mine: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    command: process.argv.slice(1).join(' '),
    since: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${JSON.stringify(mine)}\n`, { flag: 'wx' });
      return {
        file,
        release() {
          if (readOwner(file)?.pid === process.pid) rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(file);
    // an unreadable lock is one being written right now, unless it has been so for a while
    if (owner === undefined && Date.now() - mtimeOf(file) < 10_000)
      throw new SaffronError(
        'DATA_DIR_LOCKED',
        `the embedded database ${resolve(dataDir)} is being opened by another process (${file})`,
      );
    const stale = owner === undefined || (owner.hostname === mine.hostname && !alive(owner.pid));
    if (!stale) {
      const who =
        owner.pid === process.pid
          ? 'this process'
          : `process ${owner.pid}${owner.hostname === mine.hostname ? '' : ` on ${owner.hostname}`} (${owner.command}, since ${owner.since})`;
      throw new SaffronError(
        'DATA_DIR_LOCKED',
        `the embedded database ${resolve(dataDir)} is in use by ${who}. PGlite serves one process: ` +
          'stop that process first, or talk to it instead (a running `saffron cloud serve` creates ' +
          'operator tokens with POST /api/v1/users), or use PostgreSQL (DATABASE_URL) for several ' +
          `processes. If no such process runs, delete ${file}.`,
        { details: { data_dir: resolve(dataDir), lock_file: file, pid: owner.pid } },
      );
    }
    rmSync(file, { force: true }); // stale: its process is gone
  }
  throw new SaffronError('DATA_DIR_LOCKED', `cannot take the lock ${file}`);
}
