/**
 * The WASM registry over real HTTP on loopback: uploads as raw bytes and as JSON (admin
 * only), idempotent re-upload, invalid modules and metadata refused with nothing stored,
 * listing and metadata for operators, and downloads by devices and admins that hash to the
 * address they were asked for — with a file changed on disk never served.
 */
import { createHash } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';
import { compileWatGuests, type Guest } from '../support/wasmGuests.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

for (const dialect of CLOUD_DIALECTS) {
  describe(`WASM registry API on ${dialect.name}`, () => {
    let gw: TestGateway;
    let guests: Awaited<ReturnType<typeof compileWatGuests>>;
    let storageDir: string;

    beforeAll(async () => {
      gw = await startTestGateway(dialect);
      storageDir = gw.gateway.context.wasmStorageDir;
      guests = await compileWatGuests();
    });
    afterAll(async () => {
      await gw.close();
    });

    const uploadRaw = (token: string, guest: Guest | Uint8Array, query: string) =>
      gw.asUser(token, `/api/v1/wasm-components?${query}`, {
        method: 'POST',
        body: Buffer.from('bytes' in guest ? guest.bytes : guest),
        headers: { 'content-type': 'application/wasm' },
      });

    const auditRows = () =>
      gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .selectAll()
        .where('event_type', '=', 'WASM_COMPONENT_REGISTERED')
        .execute();

    it('registers raw bytes (201), answers the same bytes again with the existing row (200), audited once', async () => {
      const guest = guests.echo;
      const first = await uploadRaw(
        gw.adminToken,
        guest,
        `name=echo&version_tag=1.0.0&description=echoes&input_schema=${encodeURIComponent('{"type":"object"}')}`,
      );
      expect(first.status).toBe(201);
      const body = (await first.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        name: 'echo',
        version_tag: '1.0.0',
        binary_hash: guest.hash,
        size_bytes: guest.bytes.length,
        description: 'echoes',
        input_schema: { type: 'object' },
        output_schema: null,
        download_url: `/api/v1/wasm-components/${guest.hash}/download`,
      });
      expect(first.headers.get('location')).toBe(`/api/v1/wasm-components/${guest.hash}`);
      expect(readdirSync(storageDir)).toContain(`${guest.hash}.wasm`);

      const again = await uploadRaw(gw.adminToken, guest, 'name=other&version_tag=9.9.9');
      expect(again.status).toBe(200);
      expect(((await again.json()) as { name: string }).name).toBe('echo');
      const audit = (await auditRows()).filter(
        (r) =>
          (gw.handle.store.codec.parseJson(r.details) as { binary_hash: string }).binary_hash ===
          guest.hash,
      );
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        actor: 'test admin',
        actor_role: 'admin',
        command_id: null,
      });
    });

    it('registers a JSON upload with base64 bytes and schemas', async () => {
      const guest = guests.notJson;
      const response = await gw.asUser(gw.adminToken, '/api/v1/wasm-components', {
        method: 'POST',
        body: JSON.stringify({
          name: 'not-json',
          version_tag: '2.1.0-rc.1',
          output_schema: { type: 'object', required: ['ok'] },
          binary_base64: Buffer.from(guest.bytes).toString('base64'),
        }),
      });
      expect(response.status).toBe(201);
      expect(await response.json()).toMatchObject({
        binary_hash: guest.hash,
        output_schema: { type: 'object', required: ['ok'] },
      });
    });

    it('refuses what is not a module, bad versions and bad schemas with 422 and stores nothing', async () => {
      const before = readdirSync(storageDir).length;
      const rows = await gw.handle.store.cloud.selectFrom('wasm_components').select('id').execute();
      const notWasm = await uploadRaw(
        gw.adminToken,
        Buffer.from('definitely not wasm'),
        'name=x&version_tag=1.0.0',
      );
      expect(notWasm.status).toBe(422);
      expect(notWasm.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(((await notWasm.json()) as { code: string }).code).toBe('WASM_INVALID_MODULE');

      const badVersion = await uploadRaw(gw.adminToken, guests.trap, 'name=x&version_tag=latest');
      expect(((await badVersion.json()) as { code: string }).code).toBe('WASM_VERSION_INVALID');
      expect(badVersion.status).toBe(422);

      const badSchema = await uploadRaw(
        gw.adminToken,
        guests.trap,
        `name=x&version_tag=1.0.0&input_schema=${encodeURIComponent('[1,2]')}`,
      );
      expect(badSchema.status).toBe(422);
      expect(((await badSchema.json()) as { code: string }).code).toBe('WASM_METADATA_INVALID');

      const missingName = await uploadRaw(gw.adminToken, guests.trap, 'version_tag=1.0.0');
      expect(missingName.status).toBe(400);

      const badBase64 = await gw.asUser(gw.adminToken, '/api/v1/wasm-components', {
        method: 'POST',
        body: JSON.stringify({ name: 'x', version_tag: '1.0.0', binary_base64: '%%%' }),
      });
      expect(badBase64.status).toBe(422);

      const empty = await gw.asUser(gw.adminToken, '/api/v1/wasm-components', { method: 'POST' });
      expect(empty.status).toBe(400);

      expect(readdirSync(storageDir)).toHaveLength(before);
      expect(
        await gw.handle.store.cloud.selectFrom('wasm_components').select('id').execute(),
      ).toHaveLength(rows.length);
    });

    it('lets only admins upload; operators and viewers list and read metadata', async () => {
      const operator = await gw.token('operator');
      const viewer = await gw.token('viewer');
      expect((await uploadRaw(operator, guests.trap, 'name=t&version_tag=1.0.0')).status).toBe(403);
      expect(
        (await uploadRaw('saf_nonsense', guests.trap, 'name=t&version_tag=1.0.0')).status,
      ).toBe(401);

      const list = await gw.asUser(viewer, '/api/v1/wasm-components?name=echo');
      expect(list.status).toBe(200);
      const listed = (await list.json()) as {
        components: { binary_hash: string }[];
        total: number;
      };
      expect(listed.total).toBe(1);
      expect(listed.components[0]!.binary_hash).toBe(guests.echo.hash);
      const paged = (await (
        await gw.asUser(viewer, '/api/v1/wasm-components?limit=1&offset=1')
      ).json()) as { components: unknown[]; total: number };
      expect(paged).toMatchObject({ total: 2 });
      expect(paged.components).toHaveLength(1);

      const meta = await gw.asUser(operator, `/api/v1/wasm-components/${guests.echo.hash}`);
      expect(meta.status).toBe(200);
      expect(((await meta.json()) as { name: string }).name).toBe('echo');
    });

    it('serves downloads to devices and admins, verified against the hash; 400 malformed, 404 unknown', async () => {
      const secret = await gw.insertDevice('wasm-dev-1');
      const path = `/api/v1/wasm-components/${guests.echo.hash}/download`;
      const asDevice = await gw.asDevice('wasm-dev-1', secret, path);
      expect(asDevice.status).toBe(200);
      expect(asDevice.headers.get('content-type')).toBe('application/wasm');
      expect(asDevice.headers.get('etag')).toBe(`"${guests.echo.hash}"`);
      const bytes = new Uint8Array(await asDevice.arrayBuffer());
      expect(sha256(bytes)).toBe(guests.echo.hash);

      const asAdmin = await gw.asUser(gw.adminToken, path);
      expect(asAdmin.status).toBe(200);
      expect(sha256(new Uint8Array(await asAdmin.arrayBuffer()))).toBe(guests.echo.hash);

      const cached = await gw.asUser(gw.adminToken, path, {
        headers: { 'if-none-match': `"${guests.echo.hash}"` },
      });
      expect(cached.status).toBe(304);

      const viewer = await gw.token('viewer');
      expect((await gw.asUser(viewer, path)).status).toBe(403);
      expect((await fetch(`${gw.url}${path}`)).status).toBe(401);

      const malformed = await gw.asDevice(
        'wasm-dev-1',
        secret,
        '/api/v1/wasm-components/NOT-A-HASH/download',
      );
      expect(malformed.status).toBe(400);
      expect(malformed.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const unknown = await gw.asDevice(
        'wasm-dev-1',
        secret,
        `/api/v1/wasm-components/${'0'.repeat(64)}/download`,
      );
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { code: string }).code).toBe('WASM_COMPONENT_NOT_FOUND');
    });

    it('never serves a stored file that no longer hashes to its address', async () => {
      const guest = guests.trap;
      expect((await uploadRaw(gw.adminToken, guest, 'name=trap&version_tag=1.0.0')).status).toBe(
        201,
      );
      const file = join(storageDir, `${guest.hash}.wasm`);
      const changed = Buffer.from(guest.bytes);
      const last = changed.length - 1;
      changed.writeUInt8(changed.readUInt8(last) ^ 0xff, last);
      writeFileSync(file, changed);
      const response = await gw.asUser(
        gw.adminToken,
        `/api/v1/wasm-components/${guest.hash}/download`,
      );
      expect(response.status).toBe(500);
      expect(Buffer.from(await response.arrayBuffer()).includes(changed)).toBe(false);
    });
  });
}
