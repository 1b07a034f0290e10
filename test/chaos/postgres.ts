/**
 * The chaos run's PostgreSQL: a database of its own (`chaos_<random>`, created at the start
 * and dropped at the end, so the run never collides with the test suite's schemas), and the
 * one restart of the cluster the fault schedule asks for. The server is the one of
 * DATABASE_URL (default the development machine's 127.0.0.1:5432).
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** The server's URL (its `test` database by default). */
export const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

/** `url` pointing at `database` instead. */
function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A database created for one run. */
export interface ChaosDatabase {
  name: string;
  url: string;
  /** Drop it (terminating leftover sessions first). */
  drop(): Promise<void>;
}

/** Create `chaos_<random>` on the server. */
export async function createChaosDatabase(): Promise<ChaosDatabase> {
  const name = `chaos_${randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  return {
    name,
    url: withDatabase(SERVER_URL, name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** Whether the server answers a query. */
async function answers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Restart the local cluster and wait until it answers again; resolves with the seconds it was
 * unavailable to us. The stop is forced (`--force`: fast shutdown, then immediate, then a
 * kill), because on a busy machine a fast shutdown's checkpoint can outlast `pg_ctl`'s 60 s
 * wait, and a failed `restart` leaves the server stopped rather than restarted. Whatever the
 * restart command answers, the cluster is started again if it is down.
 */
export async function restartPostgres(): Promise<number> {
  const version = readdirSync('/etc/postgresql').sort()[0];
  if (!version) throw new Error('no cluster under /etc/postgresql');
  const cluster = ['--skip-systemctl-redirect', version, 'main'];
  const started = Date.now();
  let failure: unknown;
  try {
    await run('pg_ctlcluster', [...cluster, 'restart', '--force'], { timeout: 180_000 });
  } catch (error) {
    failure = error;
  }
  let lastStart = 0;
  while (!(await answers())) {
    if (Date.now() - started > 240_000) {
      throw new Error('PostgreSQL did not come back in 240 s', { cause: failure });
    }
    // A stop that outlasted the restart command leaves the server down once it finishes:
    // start it (a no-op answering "already running" while it is still up or starting).
    if (failure !== undefined && Date.now() - lastStart > 5_000) {
      lastStart = Date.now();
      await run('pg_ctlcluster', [...cluster, 'start'], { timeout: 120_000 }).catch(
        () => undefined,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return (Date.now() - started) / 1000;
}
