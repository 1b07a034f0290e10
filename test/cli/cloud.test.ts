/**
 * `saffron users create` and `saffron cloud serve` as a real process: the token it prints
 * authenticates against the server it serves, keys persist across restarts, and SIGTERM
 * drains and exits 0. `saffron users list` and `saffron users revoke` show and revoke it.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, serveCloud } from '../support/cli.js';

describe('saffron cloud serve on embedded PGlite', () => {
  it('serves with a token made by users create, keeps its keys, and drains on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saffron-cloud-'));
    const env = { SAFFRON_DATA_DIR: join(dir, 'cloud'), DATABASE_URL: '' };
    try {
      const bad = await runCli(['users', 'create', '--name', 'x', '--role', 'root'], {
        env,
        cwd: dir,
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--role must be one of admin, operator, viewer');
      const made = await runCli(
        ['users', 'create', '--name', 'ops', '--role', 'viewer', '--json'],
        {
          env,
          cwd: dir,
        },
      );
      expect(made.code).toBe(0);
      const { token } = JSON.parse(made.stdout) as { token: string };
      expect(token).toMatch(/^saf_/);

      const first = serveCloud(env, dir);
      const url = await first.listening;
      const metrics = await fetch(`${url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('saffron_http_requests_total');
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      const keyFile = join(dir, 'keys', 'signing.pem');
      expect(statSync(keyFile).mode & 0o077).toBe(0); // owner-only
      const pem = readFileSync(keyFile, 'utf8');
      const second = serveCloud(env, dir);
      await second.listening;
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(readFileSync(keyFile, 'utf8')).toBe(pem); // same key after a restart

      const { token_id: tokenId } = JSON.parse(made.stdout) as { token_id: string };
      const list = async () => {
        const run = await runCli(['users', 'list', '--json'], { env, cwd: dir });
        expect(run.code, run.stderr).toBe(0);
        return run.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      };
      const [listed] = await list();
      expect(listed).toMatchObject({
        token_id: tokenId,
        name: 'ops',
        role: 'viewer',
        state: 'active',
      });
      expect(JSON.stringify(listed)).not.toContain(token); // never the token itself
      const revoke = (id: string) =>
        runCli(['users', 'revoke', '--token-id', id], { env, cwd: dir });
      const malformed = await revoke('ops');
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toContain("--token-id must be a token's UUID");
      expect((await revoke('00000000-0000-4000-8000-000000000000')).code).toBe(1);
      const revoked = await revoke(tokenId);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect((await list())[0]).toMatchObject({ token_id: tokenId, state: 'revoked' });
      expect((await revoke(tokenId)).code).toBe(1); // nothing left to revoke
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('takes its HTTP timeouts from flags or the environment, and refuses bad ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saffron-cloud-'));
    const env = { SAFFRON_DATA_DIR: join(dir, 'cloud'), DATABASE_URL: '' };
    try {
      const bad = await runCli(['cloud', 'serve', '--request-timeout', 'soon'], { env, cwd: dir });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--request-timeout must be a number of seconds');
      const inverted = await runCli(['cloud', 'serve'], {
        env: { ...env, SAFFRON_HTTP_HEADERS_TIMEOUT: '200', SAFFRON_HTTP_REQUEST_TIMEOUT: '100' },
        cwd: dir,
      });
      expect(inverted.code).toBe(2);
      expect(inverted.stderr).toContain('must not exceed the request timeout');

      // headers that never end are cut off after the configured half second
      const served = serveCloud(
        { ...env, SAFFRON_HTTP_REQUEST_TIMEOUT: '0.5', SAFFRON_HTTP_HEADERS_TIMEOUT: '0.5' },
        dir,
      );
      const { port } = new URL(await served.listening);
      const slow = connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => slow.once('connect', resolve));
      const closed = new Promise((resolve) => slow.once('close', resolve));
      slow.on('error', () => undefined);
      slow.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n');
      const trickle = setInterval(() => slow.write('x-slow: 1\r\n'), 50);
      await closed;
      clearInterval(trickle);
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
