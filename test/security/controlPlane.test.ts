/**
 * The control plane's security suite: forged, replayed, expired and cross-device device
 * signatures; tampered signed config and WASM binaries; injection attempts in every list
 * filter; oversized, deeply nested and prototype-polluting bodies; path traversal towards
 * WASM storage; privilege escalation across roles. Each attempt must be refused with the
 * right status and a problem+json code — and must write nothing: every table's row count and
 * the content of the tables an attacker would aim at are compared before and after.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, deviceAuthHeaders } from '../../gateway/index.js';
import { CLOUD_SCHEMA, verifySignedDocument } from '../../runtime/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signedRecord } from '../support/device.js';
import { CLOUD_DIALECTS } from '../support/stores.js';
import { compileWatGuests } from '../support/wasmGuests.js';

type Json = Record<string, unknown>;

/** Tables whose content an attack would change (hashed whole); every table is counted. */
const WATCHED = [
  'edge_devices',
  'device_commands',
  'saf_transactions',
  'device_configs',
  'policies',
  'device_assignments',
  'wasm_components',
  'workflow_executions',
  'api_tokens',
  'registration_keys',
] as const;

for (const dialect of CLOUD_DIALECTS) {
  describe(`control-plane security on ${dialect.name}`, () => {
    let gw: TestGateway;
    let operator: string;
    let viewer: string;
    let secretA: string;
    let secretB: string;

    beforeAll(async () => {
      gw = await startTestGateway(dialect);
      operator = await gw.token('operator');
      viewer = await gw.token('viewer');
      secretA = await gw.insertDevice('sec-a');
      secretB = await gw.insertDevice('sec-b');
      // as an admin: an operator's configuration push waits for approval
      const published = await gw.asUser(gw.adminToken, '/api/v1/config/fleet/*', {
        method: 'PUT',
        body: JSON.stringify({ floor_limit_minor: 5000 }),
      });
      expect(published.status).toBe(200);
    });
    afterAll(async () => {
      await gw.close();
    });

    /** Row counts of every table, and a content hash of the watched ones. */
    const snapshot = async () => {
      const db = gw.handle.store.db;
      const counts: Record<string, number> = {};
      for (const table of CLOUD_SCHEMA.map((t) => t.name)) {
        // the replay cache is written by every authenticated device request, by design
        if (table === 'device_request_nonces') continue;
        const { rows } = await sql<{ n: string | number }>`SELECT count(*) AS n FROM ${sql.table(
          table,
        )}`.execute(db);
        counts[table] = Number(rows[0]!.n);
      }
      const hashes: Record<string, string> = {};
      for (const table of WATCHED) {
        const { rows } = await sql<Json>`SELECT * FROM ${sql.table(table)}`.execute(db);
        const stable = rows
          .map((row) => {
            // bookkeeping a read legitimately updates
            const { last_used_at: _u, last_seen: _s, updated_at: _a, metadata: _m, ...rest } = row;
            return JSON.stringify(rest);
          })
          .sort();
        hashes[table] = createHash('sha256').update(stable.join('\n')).digest('hex');
      }
      return { counts, hashes };
    };

    const expectProblem = async (response: Response, status: number, code?: string) => {
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const body = (await response.json()) as { code: string };
      if (code !== undefined) expect(body.code).toBe(code);
      return body;
    };

    const batchBody = (deviceId: string, secret: string) =>
      JSON.stringify({ records: [signedRecord(deviceId, secret, { device_sequence: 1 })] });

    it('refuses forged, replayed, expired and cross-device signatures, writing nothing', async () => {
      const before = await snapshot();
      const path = '/api/v1/transactions/batch';
      const send = (headers: Record<string, string>, body: string) =>
        fetch(`${gw.url}${path}`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', ...headers },
        });
      const body = batchBody('sec-a', secretA);
      const sign = (deviceId: string, secret: string, extra: Json = {}) =>
        deviceAuthHeaders(deviceId, secret, {
          method: 'POST',
          pathWithQuery: path,
          body,
          ...extra,
        });

      // forged: signed with a guessed secret
      await expectProblem(
        await send(sign('sec-a', 'not-the-secret'), body),
        401,
        'INVALID_SIGNATURE',
      );
      // cross-device: device B's secret claiming to be A
      await expectProblem(await send(sign('sec-a', secretB), body), 401, 'INVALID_SIGNATURE');
      // an unknown device fails exactly like a wrong signature
      await expectProblem(await send(sign('sec-ghost', secretA), body), 401, 'INVALID_SIGNATURE');
      // expired: a valid signature over a timestamp outside the window
      const old = new Date(Date.now() - 301_000).toISOString();
      await expectProblem(
        await send(sign('sec-a', secretA, { timestamp: old }), body),
        401,
        'TIMESTAMP_OUT_OF_WINDOW',
      );
      // body swapped under a valid signature
      const swapped = batchBody('sec-a', secretA);
      await expectProblem(await send(sign('sec-a', secretA), swapped), 401, 'INVALID_SIGNATURE');
      // B, correctly signed, uploading A's records
      const asB = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          ...deviceAuthHeaders('sec-b', secretB, { method: 'POST', pathWithQuery: path, body }),
        },
      });
      expect(asB.status).toBe(200);
      const answer = (await asB.json()) as { synced_ids: string[]; rejected: { code: string }[] };
      expect(answer.synced_ids).toEqual([]);
      expect(answer.rejected.map((r) => r.code)).toEqual(['DEVICE_MISMATCH']);
      // B reading A's resources
      for (const resource of ['/api/v1/devices/sec-a', '/api/v1/devices/sec-a/config']) {
        await expectProblem(await gw.asDevice('sec-b', secretB, resource), 403);
      }
      await expectProblem(
        await gw.asDevice('sec-b', secretB, '/api/v1/devices/sec-a/metrics', {
          method: 'POST',
          body: JSON.stringify({
            disk_usage_percent: 1,
            memory_usage_mb: 1,
            pending_transactions: 0,
            last_sync: new Date().toISOString(),
            network_available: true,
          }),
        }),
        403,
      );
      expect(await snapshot()).toEqual(before);

      // replayed: the first use is accepted (and writes), the replay is refused
      const once = sign('sec-a', secretA);
      expect((await send(once, body)).status).toBe(200);
      const afterFirst = await snapshot();
      await expectProblem(await send(once, body), 401, 'REPLAYED_REQUEST');
      expect(await snapshot()).toEqual(afterFirst);
    });

    it('detects tampered configuration on the device side', async () => {
      const response = await gw.asDevice('sec-a', secretA, '/api/v1/devices/sec-a/config');
      expect(response.status).toBe(200);
      const doc = (await response.json()) as Json & { config: Json };
      expect(verifySignedDocument(doc, gw.keys.publicKeyPem)).toMatchObject({ ok: true });
      // content changed without the checksum: corruption
      const corrupted = { ...doc, config: { ...doc.config, floor_limit_minor: 999_999 } };
      expect(verifySignedDocument(corrupted, gw.keys.publicKeyPem)).toMatchObject({
        ok: false,
        code: 'CONFIG_CORRUPTED',
      });
      // content and checksum changed consistently, signature kept: tampering
      const { contentChecksum } = await import('../../runtime/index.js');
      const forged = { ...corrupted, checksum: contentChecksum(corrupted.config) };
      const verdict = verifySignedDocument(forged, gw.keys.publicKeyPem);
      expect(verdict.ok).toBe(false);
      expect(verdict).not.toMatchObject({ code: 'CONFIG_CORRUPTED' });
    });

    it('never serves a tampered or escaping WASM binary', async () => {
      const guests = await compileWatGuests();
      const upload = await gw.asUser(
        gw.adminToken,
        '/api/v1/wasm-components?name=sec-echo&version_tag=1.0.0',
        {
          method: 'POST',
          body: Buffer.from(guests.echo.bytes),
          headers: { 'content-type': 'application/wasm' },
        },
      );
      expect(upload.status).toBe(201);
      // a row naming a file outside WASM storage (written behind the API's back)
      const outside = mkdtempSync(join(tmpdir(), 'saffron-outside-'));
      const secretFile = join(outside, 'secret.wasm');
      writeFileSync(secretFile, 'TOP SECRET CONTENT');
      const fakeHash = createHash('sha256').update('escape').digest('hex');
      await gw.handle.store.cloud
        .insertInto('wasm_components')
        .values({
          id: randomUUID(),
          name: 'escape',
          version_tag: '1.0.0',
          binary_hash: fakeHash,
          blob_storage_path: `../../../../../../..${secretFile}`,
          size_bytes: 18,
        })
        .execute();
      const escaping = await gw.asDevice(
        'sec-a',
        secretA,
        `/api/v1/wasm-components/${fakeHash}/download`,
      );
      expect(escaping.status).toBeGreaterThanOrEqual(400);
      expect(await escaping.text()).not.toContain('TOP SECRET');
      // traversal in the URL never reaches the store
      for (const hash of ['..%2F..%2Fetc%2Fpasswd', '..', `${'0'.repeat(63)}/`]) {
        const response = await gw.asDevice(
          'sec-a',
          secretA,
          `/api/v1/wasm-components/${hash}/download`,
        );
        expect([400, 404]).toContain(response.status);
      }
    });

    it('treats injection attempts in every list filter as plain values', async () => {
      const before = await snapshot();
      const payloads = [
        "' OR '1'='1",
        "x'; DROP TABLE edge_devices; --",
        '{"$ne": null}',
        '%',
        '_',
        '\\',
        'a\u0000b',
      ];
      const lists = [
        (v: string) => `/api/v1/devices?device_type=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/devices?location=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/devices?status=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/workflows?workflow_type=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/workflows?owner_id=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/workflows?cursor=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/wasm-components?name=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/devices/sec-a/commands?status=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/devices?cursor=${encodeURIComponent(v)}`,
        (v: string) => `/api/v1/policies/${encodeURIComponent(v)}`,
      ];
      for (const list of lists)
        for (const payload of payloads) {
          const response = await gw.asUser(operator, list(payload));
          expect(response.status, `${list(payload)}`).toBeLessThan(500);
          if (response.status === 200) {
            const body = (await response.json()) as Record<string, unknown[]>;
            // nothing matches a value no row holds
            for (const key of ['devices', 'items', 'components', 'commands'])
              if (key in body) expect(body[key], list(payload)).toEqual([]);
          } else expect(response.headers.get('content-type')).toMatch(/problem\+json/);
        }
      expect(await snapshot()).toEqual(before);
    });

    it('refuses oversized, deeply nested and prototype-polluting bodies, writing nothing', async () => {
      const before = await snapshot();
      const post = (body: string) =>
        gw.asUser(operator, '/api/v1/policies', { method: 'POST', body });
      await expectProblem(
        await post(JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) })),
        413,
        'BODY_TOO_LARGE',
      );
      await expectProblem(await post(`${'['.repeat(40)}${']'.repeat(40)}`), 400, 'BODY_TOO_DEEP');
      await expectProblem(
        await post('{"name":"p","policy_type":"FRAUD","rules":[],"__proto__":{"admin":true}}'),
        400,
        'FORBIDDEN_KEY',
      );
      await expectProblem(
        await post('{"name":"p","policy_type":"FRAUD","rules":[],"constructor":{"prototype":{}}}'),
        400,
      );
      await expectProblem(await post('{"name": "p",'), 400, 'MALFORMED_JSON');
      // NUL cannot be stored by PostgreSQL: refused up front, not a driver error
      await expectProblem(
        await post('{"name":"p\\u0000","policy_type":"FRAUD","rules":[]}'),
        400,
        'NUL_CHARACTER',
      );
      // the same limits hold for device uploads
      const deep = JSON.stringify({
        records: [JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`)],
      });
      await expectProblem(
        await gw.asDevice('sec-a', secretA, '/api/v1/transactions/batch', {
          method: 'POST',
          body: deep,
        }),
        400,
        'BODY_TOO_DEEP',
      );
      expect(({} as Json).admin).toBeUndefined();
      expect(await snapshot()).toEqual(before);
    });

    it('stops honouring a token the moment it is revoked, and only an admin may revoke', async () => {
      const created = await createApiToken(gw.handle.store, { name: 'to revoke', role: 'admin' });
      const { token } = created;
      expect((await gw.asUser(token, '/api/v1/devices')).status).toBe(200); // now held in memory
      const revoke = (as: string, id: string) =>
        gw.asUser(as, `/api/v1/users/${id}`, { method: 'DELETE' });
      await expectProblem(await revoke(operator, created.tokenId), 403, 'FORBIDDEN');
      await expectProblem(await revoke(gw.adminToken, 'not-a-uuid'), 400, 'VALIDATION_FAILED');
      await expectProblem(await revoke(gw.adminToken, randomUUID()), 404, 'TOKEN_NOT_FOUND');
      expect((await revoke(gw.adminToken, created.tokenId)).status).toBe(204);
      await expectProblem(await gw.asUser(token, '/api/v1/devices'), 401, 'INVALID_TOKEN');
      // revoking twice is a 404: nothing left to revoke
      await expectProblem(await revoke(gw.adminToken, created.tokenId), 404, 'TOKEN_NOT_FOUND');
      const hash = createHash('sha256').update(token).digest('hex');
      const row = await gw.handle.store.cloud
        .selectFrom('api_tokens')
        .select('revoked_at')
        .where('token_hash', '=', hash)
        .executeTakeFirstOrThrow();
      expect(row.revoked_at).not.toBeNull();
    });

    it('refuses privilege escalation across roles, writing nothing', async () => {
      const before = await snapshot();
      const attempts: [string, string, string, unknown][] = [
        // viewers read only
        [viewer, 'POST', '/api/v1/devices/sec-a/commands', { command_type: 'REBOOT', payload: {} }],
        [viewer, 'PUT', '/api/v1/config/fleet/*', { floor_limit_minor: 1 }],
        [viewer, 'POST', '/api/v1/policies', { name: 'v', policy_type: 'FRAUD', rules: [] }],
        [viewer, 'PATCH', '/api/v1/devices/sec-a', { location: 'elsewhere' }],
        // operators cannot do admin work
        [operator, 'DELETE', '/api/v1/devices/sec-a', undefined],
        [operator, 'POST', '/api/v1/registration-keys', { name: 'k' }],
        [
          operator,
          'POST',
          '/api/v1/devices/register',
          {
            device_name: 'x',
            device_type: 'pos',
            location: 'l',
          },
        ],
        [operator, 'POST', '/api/v1/workflow-definitions', { yaml: 'workflow_type: x' }],
        [operator, 'POST', '/api/v1/devices/sec-a/rotate-secret', {}],
      ];
      for (const [token, method, path, body] of attempts) {
        const response = await gw.asUser(token, path, {
          method,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        expect(response.status, `${method} ${path}`).toBe(403);
      }
      // a device cannot act as an operator
      for (const [method, path, body] of [
        ['GET', '/api/v1/devices', undefined],
        ['POST', '/api/v1/devices/sec-a/commands', { command_type: 'REBOOT', payload: {} }],
        ['PUT', '/api/v1/config/device/sec-a', { floor_limit_minor: 1_000_000 }],
        ['GET', '/api/v1/workflows', undefined],
      ] as const) {
        const response = await gw.asDevice('sec-a', secretA, path, {
          method,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        expect(response.status, `device ${method} ${path}`).toBe(403);
      }
      // a device secret is not a bearer token, and a garbage token is nobody
      await expectProblem(await gw.asUser(secretA, '/api/v1/devices'), 401, 'INVALID_TOKEN');
      await expectProblem(
        await fetch(`${gw.url}/api/v1/devices`, { headers: { authorization: 'Basic YWRtaW4=' } }),
        401,
        'AUTH_SCHEME_UNSUPPORTED',
      );
      expect(await snapshot()).toEqual(before);
    });
  });
}
