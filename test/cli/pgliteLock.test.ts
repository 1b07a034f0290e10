/**
 * One process per embedded PGlite directory. While `saffron cloud serve` runs on it, a
 * second opener (`saffron users create`) is refused with a message naming the server's
 * process, instead of opening its own copy of the database; operators are created through
 * the server (`POST /api/v1/users`) meanwhile. Nothing either process wrote is lost: the
 * token made before the server, the one made through it, and the one made after it stopped
 * all authenticate against the restarted server. A lock left by a process that is gone is
 * taken over.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, serveCloud } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'saffron-pglite-lock-'));
const dataDir = join(dir, 'cloud');
const env = { SAFFRON_DATA_DIR: dataDir, DATABASE_URL: '' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function createUser(name: string) {
  return runCli(['users', 'create', '--name', name, '--role', 'admin', '--json'], {
    env,
    cwd: dir,
  });
}

const tokenOf = (run: { stdout: string }) => (JSON.parse(run.stdout) as { token: string }).token;

const authenticates = async (url: string, token: string) =>
  (await fetch(`${url}/api/v1/workflows`, { headers: { authorization: `Bearer ${token}` } }))
    .status;

describe('an embedded PGlite directory and two processes', () => {
  it('refuses a second opener while the server runs, and loses nothing either wrote', async () => {
    const before = await createUser('before');
    expect(before.code, before.stderr).toBe(0);
    expect(existsSync(`${dataDir}.lock`)).toBe(false); // released on close

    const server = serveCloud(env, dir);
    const url = await server.listening;
    const refused = await createUser('during');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is in use by process ${server.child.pid}`);
    expect(refused.stderr).toContain('POST /api/v1/users');

    const viaApi = await fetch(`${url}/api/v1/users`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokenOf(before)}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'through the server', role: 'operator' }),
    });
    expect(viaApi.status).toBe(201);
    const { token: served } = (await viaApi.json()) as { token: string };
    expect(await authenticates(url, served)).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const after = await createUser('after');
    expect(after.code, after.stderr).toBe(0);
    const again = serveCloud(env, dir);
    const url2 = await again.listening;
    for (const token of [tokenOf(before), served, tokenOf(after)])
      expect(await authenticates(url2, token)).toBe(200);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 120_000);

  it('takes over a lock whose process is gone', async () => {
    // a pid far above any pid_max is never a running process
    writeFileSync(
      `${dataDir}.lock`,
      JSON.stringify({
        pid: 2 ** 30,
        hostname: (await import('node:os')).hostname(),
        command: 'x',
        since: '',
      }),
    );
    const made = await createUser('after a crash');
    expect(made.code, made.stderr).toBe(0);
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
  }, 60_000);
});
