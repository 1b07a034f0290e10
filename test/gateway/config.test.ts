/**
 * Signed configuration over real HTTP on loopback: publishing layers, precedence and merging
 * (fleet ← device type ← device), ETag / If-None-Match → 304, the client-side checks a
 * device makes (checksum, then the Ed25519 signature with the key from
 * /api/v1/config/public-key) including tampered documents, fraud rules selected through
 * policy assignments, and the policy and assignment APIs.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ephemeralKeyring } from '../../gateway/index.js';
import { canonicalJson, verifySignedDocument } from '../../runtime/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Doc = Record<string, unknown> & { checksum: string; signature: string };

const json = (value: unknown) => JSON.stringify(value);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** What an edge agent does before loading a document, written from the definition in docs/reference/http-api.md. */
function clientCheck(doc: Doc, member: 'config' | 'rules', publicKeyPem: string) {
  const checksumOk = sha256(canonicalJson(doc[member])) === doc.checksum;
  const { signature, ...unsigned } = doc;
  const signatureOk = verify(
    null,
    Buffer.from(canonicalJson(unsigned), 'utf8'),
    createPublicKey(publicKeyPem),
    Buffer.from(signature, 'base64'),
  );
  return { checksumOk, signatureOk };
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`signed configuration on ${dialect.name}`, () => {
    let gw: TestGateway;
    let publicKeyPem: string;
    const secrets = new Map<string, string>();

    beforeAll(async () => {
      gw = await startTestGateway(dialect);
      const res = await gw.asUser(await gw.token('viewer'), '/api/v1/config/public-key');
      publicKeyPem = ((await res.json()) as { public_key_pem: string }).public_key_pem;
    });
    afterAll(async () => {
      await gw.close();
    });

    const register = async (deviceId: string, deviceType: string) =>
      secrets.set(deviceId, await gw.registerDevice(deviceId, deviceType));
    const asDevice = (deviceId: string, path: string, init: RequestInit & { body?: string } = {}) =>
      gw.asDevice(deviceId, secrets.get(deviceId)!, path, init);
    const publish = async (scope: string, key: string, config: unknown, token = gw.adminToken) =>
      gw.asUser(token, `/api/v1/config/${scope}/${encodeURIComponent(key)}`, {
        method: 'PUT',
        body: json(config),
      });
    const published = async (scope: string, key: string, config: unknown) => {
      const res = await publish(scope, key, config);
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as { version: number; checksum: string };
    };
    const deviceConfig = async (deviceId: string, headers: Record<string, string> = {}) =>
      asDevice(deviceId, `/api/v1/devices/${deviceId}/config`, { headers });

    it('serves the public key to every authenticated principal, and nobody else', async () => {
      await register('pk-1', 'POS');
      const res = await asDevice('pk-1', '/api/v1/config/public-key');
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, string>;
      expect(body.algorithm).toBe('Ed25519');
      expect(body.public_key_pem).toBe(gw.keys.publicKeyPem);
      expect(body.key_id).toMatch(/^[0-9a-f]{64}$/);
      expect(createPublicKey(body.public_key_pem!).asymmetricKeyType).toBe('ed25519');
      expect((await fetch(`${gw.url}/api/v1/config/public-key`)).status).toBe(401);
    });

    it('merges fleet ← device type ← device, most specific winning', async () => {
      await register('cfg-pos', 'POS');
      await register('cfg-atm', 'ATM');
      const empty = (await (await deviceConfig('cfg-pos')).json()) as Doc;
      expect(empty).toMatchObject({
        type: 'saffron.device-config.v1',
        device_id: 'cfg-pos',
        version: 'f0.t0.d0',
        layers: [],
        config: {},
      });

      await published('fleet', '*', {
        currency: 'EUR',
        limits: { offline_max_minor: 5000, daily_max_minor: 100000 },
        features: ['saf'],
        banner: 'hello',
      });
      await published('device_type', 'POS', {
        limits: { offline_max_minor: 2500 },
        features: ['saf', 'tips'],
      });
      await published('device', 'cfg-pos', { limits: { daily_max_minor: 50000 }, banner: null });

      const pos = (await (await deviceConfig('cfg-pos')).json()) as Doc;
      expect(pos.version).toBe('f1.t1.d1');
      expect(pos.layers).toEqual([
        { scope: 'fleet', scope_key: '*', version: 1 },
        { scope: 'device_type', scope_key: 'POS', version: 1 },
        { scope: 'device', scope_key: 'cfg-pos', version: 1 },
      ]);
      expect(pos.config).toEqual({
        currency: 'EUR',
        limits: { offline_max_minor: 2500, daily_max_minor: 50000 },
        features: ['saf', 'tips'],
      });
      // another type sees only the fleet layer
      const atm = (await (await deviceConfig('cfg-atm')).json()) as Doc;
      expect(atm.version).toBe('f1.t0.d0');
      expect(atm.config).toEqual({
        currency: 'EUR',
        limits: { offline_max_minor: 5000, daily_max_minor: 100000 },
        features: ['saf'],
        banner: 'hello',
      });
      // changing the device's type changes the layer it inherits
      const patch = await gw.asUser(gw.adminToken, '/api/v1/devices/cfg-atm', {
        method: 'PATCH',
        body: json({ device_type: 'POS' }),
      });
      expect(patch.status).toBe(200);
      const moved = (await (await deviceConfig('cfg-atm')).json()) as Doc;
      expect(moved.version).toBe('f1.t1.d0');
      expect((moved.config as { limits: unknown }).limits).toEqual({
        offline_max_minor: 2500,
        daily_max_minor: 100000,
      });
    });

    it('signs what a device can verify, and a tampered document fails verification', async () => {
      await register('sig-1', 'SIGNER');
      await published('device', 'sig-1', { pin_pad: { timeout_s: 30 }, note: 'ünïcødé ✓' });
      const doc = (await (await deviceConfig('sig-1')).json()) as Doc;
      expect(doc.checksum).toBe(sha256(canonicalJson(doc.config)));
      expect(clientCheck(doc, 'config', publicKeyPem)).toEqual({
        checksumOk: true,
        signatureOk: true,
      });
      expect(verifySignedDocument(doc, publicKeyPem)).toEqual({ ok: true });

      // content changed in transit: the checksum no longer matches (corruption)
      const corrupted = structuredClone(doc);
      (corrupted.config as { pin_pad: { timeout_s: number } }).pin_pad.timeout_s = 3000;
      expect(clientCheck(corrupted, 'config', publicKeyPem).checksumOk).toBe(false);
      expect(verifySignedDocument(corrupted, publicKeyPem)).toMatchObject({
        ok: false,
        code: 'CONFIG_CORRUPTED',
      });
      // content and checksum both replaced: only the signature catches it (tampering)
      const forged = structuredClone(corrupted);
      forged.checksum = sha256(canonicalJson(forged.config));
      expect(clientCheck(forged, 'config', publicKeyPem)).toEqual({
        checksumOk: true,
        signatureOk: false,
      });
      expect(verifySignedDocument(forged, publicKeyPem)).toMatchObject({
        ok: false,
        code: 'CONFIG_TAMPERED',
      });
      // another device's document replayed to this one: the signed device id differs
      const replayed = { ...doc, device_id: 'someone-else' };
      expect(clientCheck(replayed, 'config', publicKeyPem).signatureOk).toBe(false);
      // a document signed by another key
      const otherKey = ephemeralKeyring().publicKeyPem;
      expect(clientCheck(doc, 'config', otherKey).signatureOk).toBe(false);
    });

    it('answers If-None-Match with 304 until a new version is published', async () => {
      await register('etag-1', 'ETAGGER');
      await published('device', 'etag-1', { v: 1 });
      const first = await deviceConfig('etag-1');
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
      const doc = (await first.json()) as Doc;
      const { signature: _signature, ...unsigned } = doc;
      expect(etag).toBe(`"${sha256(canonicalJson(unsigned))}"`);

      for (const header of [etag, `W/${etag}`, `"nope", ${etag}`, '*', etag.slice(1, -1)]) {
        const res = await deviceConfig('etag-1', { 'if-none-match': header });
        expect(res.status, header).toBe(304);
        expect(await res.text()).toBe('');
        expect(res.headers.get('etag')).toBe(etag);
      }
      const other = await deviceConfig('etag-1', { 'if-none-match': '"0000"' });
      expect(other.status).toBe(200);

      // a fleet change reaches the device as a new ETag
      await published('fleet', '*', { heartbeat_s: 15 });
      const changed = await deviceConfig('etag-1', { 'if-none-match': etag });
      expect(changed.status).toBe(200);
      const newEtag = changed.headers.get('etag')!;
      expect(newEtag).not.toBe(etag);
      expect(((await changed.json()) as Doc).config).toMatchObject({ v: 1, heartbeat_s: 15 });
      expect((await deviceConfig('etag-1', { 'if-none-match': newEtag })).status).toBe(304);
    });

    it('versions layers, validates scopes and enforces roles', async () => {
      await register('ver-1', 'VER');
      const v1 = await published('device_type', 'VER', { a: 1 });
      const v2 = await published('device_type', 'VER', { a: 2 });
      expect([v1.version, v2.version]).toEqual([1, 2]);
      const current = (await (
        await gw.asUser(gw.adminToken, '/api/v1/config/device_type/VER')
      ).json()) as Record<string, unknown>;
      expect(current).toMatchObject({ version: 2, current: true, config: { a: 2 } });
      const old = (await (
        await gw.asUser(gw.adminToken, '/api/v1/config/device_type/VER?version=1')
      ).json()) as Record<string, unknown>;
      expect(old).toMatchObject({ version: 1, current: false, config: { a: 1 } });
      const rows = await gw.handle.store.cloud
        .selectFrom('device_configs')
        .select(['version', 'is_current', 'signature', 'checksum'])
        .where('scope', '=', 'device_type')
        .where('scope_key', '=', 'VER')
        .orderBy('version')
        .execute();
      expect(rows.map((r) => [r.version, gw.handle.store.codec.parseBool(r.is_current)])).toEqual([
        [1, false],
        [2, true],
      ]);
      expect(rows[1]!.checksum).toBe(sha256(canonicalJson({ a: 2 })));

      expect((await publish('fleet', 'eu', {})).status).toBe(400);
      expect((await publish('region', 'eu', {})).status).toBe(400);
      expect((await publish('device', 'ghost', {})).status).toBe(404);
      const notObject = await publish('fleet', '*', [1, 2]);
      expect(notObject.status).toBe(422);
      expect(await notObject.json()).toMatchObject({ errors: [{ path: '$' }] });
      const viewer = await gw.token('viewer');
      expect((await publish('fleet', '*', {}, viewer)).status).toBe(403);
      expect((await gw.asUser(viewer, '/api/v1/config/device_type/VER')).status).toBe(200);
      const operator = await gw.token('operator');
      // an operator may publish; the shipped default holds it for a second person's approval
      const byOperator = await publish('device_type', 'VER', { a: 3 }, operator);
      expect(byOperator.status).toBe(202);
      expect(await byOperator.json()).toMatchObject({
        status: 'PENDING',
        request: { kind: 'config_layer', policy_name: 'default-configuration-pushes' },
      });
      const byDevice = await asDevice('ver-1', '/api/v1/config/device/ver-1', {
        method: 'PUT',
        body: json({ a: 1 }),
      });
      expect(byDevice.status).toBe(403);
      expect((await gw.asUser(gw.adminToken, '/api/v1/config/device_type/NONE')).status).toBe(404);
    });

    it("keeps a device out of another device's configuration", async () => {
      await register('own-a', 'OWN');
      await register('own-b', 'OWN');
      expect((await asDevice('own-a', '/api/v1/devices/own-b/config')).status).toBe(403);
      const viewer = await gw.token('viewer');
      expect((await gw.asUser(viewer, '/api/v1/devices/own-b/config')).status).toBe(200);
      expect((await gw.asUser(viewer, '/api/v1/devices/ghost/config')).status).toBe(404);
    });

    it('selects fraud rules through policy assignments, with the same ETag and signature scheme', async () => {
      await register('fraud-1', 'FRAUDY');
      await register('fraud-2', 'FRAUDY');
      const rules = async (deviceId: string, headers: Record<string, string> = {}) =>
        asDevice(deviceId, '/api/v1/config/fraud-rules', { headers });
      const createPolicy = async (body: Record<string, unknown>) => {
        const res = await gw.asUser(gw.adminToken, '/api/v1/policies', {
          method: 'POST',
          body: json(body),
        });
        expect(res.status, await res.clone().text()).toBe(201);
      };
      await createPolicy({
        name: 'velocity',
        policy_type: 'FRAUD',
        rules: [{ field: 'amount_minor', op: 'gt', value: 50000, action: 'review' }],
      });
      await createPolicy({
        name: 'blocked-countries',
        policy_type: 'FRAUD',
        rules: [
          { id: 'c1', field: 'card.country', op: 'in', value: ['XX', 'YY'], action: 'decline' },
        ],
      });
      await createPolicy({
        name: 'tipping',
        policy_type: 'BUSINESS',
        rules: [{ field: 'tip_percent', op: 'lte', value: 30, action: 'allow' }],
      });

      // no assignments: every enabled fraud policy, never a business one
      const fleet = await rules('fraud-1');
      expect(fleet.status).toBe(200);
      const fleetDoc = (await fleet.json()) as Doc & { rules: Record<string, unknown>[] };
      expect(fleetDoc).toMatchObject({
        type: 'saffron.fraud-rules.v1',
        device_id: 'fraud-1',
        selection: 'fleet_default',
        policies: [
          { name: 'blocked-countries', version: 1 },
          { name: 'velocity', version: 1 },
        ],
      });
      expect(fleetDoc.rules).toEqual([
        {
          id: 'c1',
          field: 'card.country',
          op: 'in',
          value: ['XX', 'YY'],
          action: 'decline',
          policy: 'blocked-countries',
          policy_version: 1,
        },
        {
          field: 'amount_minor',
          op: 'gt',
          value: 50000,
          action: 'review',
          policy: 'velocity',
          policy_version: 1,
        },
      ]);
      expect(clientCheck(fleetDoc, 'rules', publicKeyPem)).toEqual({
        checksumOk: true,
        signatureOk: true,
      });
      const tampered = structuredClone(fleetDoc);
      tampered.rules[1]!.value = 5_000_000;
      tampered.checksum = sha256(canonicalJson(tampered.rules));
      expect(clientCheck(tampered, 'rules', publicKeyPem).signatureOk).toBe(false);

      const etag = fleet.headers.get('etag')!;
      const otherEtag = (await rules('fraud-2')).headers.get('etag')!;
      expect(otherEtag).not.toBe(etag); // each document names its device
      const cached = await rules('fraud-1', { 'if-none-match': etag });
      expect(cached.status).toBe(304);
      expect(await cached.text()).toBe('');

      // an assignment narrows the device to the policies it names
      const assign = await gw.asUser(gw.adminToken, '/api/v1/devices/fraud-1/assignments', {
        method: 'POST',
        body: json({ assignment_type: 'POLICY', target_id: 'velocity' }),
      });
      expect(assign.status).toBe(201);
      const narrowed = await rules('fraud-1', { 'if-none-match': etag });
      expect(narrowed.status).toBe(200);
      const narrowedDoc = (await narrowed.json()) as Doc;
      expect(narrowedDoc).toMatchObject({
        selection: 'assigned',
        policies: [{ name: 'velocity', version: 1 }],
      });
      // the other device still gets the fleet default, unchanged
      expect((await rules('fraud-2', { 'if-none-match': otherEtag })).status).toBe(304);

      // a new policy version reaches the device
      const revise = await gw.asUser(gw.adminToken, '/api/v1/policies/velocity', {
        method: 'PUT',
        body: json({
          rules: [{ field: 'amount_minor', op: 'gt', value: 20000, action: 'decline' }],
        }),
      });
      expect(revise.status).toBe(200);
      expect(await revise.json()).toMatchObject({
        version: 2,
        policy_type: 'FRAUD',
        enabled: true,
      });
      const revised = await rules('fraud-1', { 'if-none-match': narrowed.headers.get('etag')! });
      expect(revised.status).toBe(200);
      const revisedDoc = (await revised.json()) as Doc & { rules: unknown[] };
      expect(revisedDoc.policies).toEqual([{ name: 'velocity', version: 2 }]);
      expect(revisedDoc.rules).toEqual([
        {
          field: 'amount_minor',
          op: 'gt',
          value: 20000,
          action: 'decline',
          policy: 'velocity',
          policy_version: 2,
        },
      ]);
      expect(verifySignedDocument(revisedDoc, publicKeyPem)).toEqual({ ok: true });

      // disabling the only assigned policy leaves the device with none (not the fleet default)
      const disable = await gw.asUser(gw.adminToken, '/api/v1/policies/velocity/disable', {
        method: 'POST',
      });
      expect(await disable.json()).toMatchObject({ version: 2, enabled: false });
      const disabled = (await (await rules('fraud-1')).json()) as Doc;
      expect(disabled).toMatchObject({ selection: 'assigned', policies: [], rules: [] });
      // …and the fleet default loses it too
      const fleetNow = (await (await rules('fraud-2')).json()) as Doc;
      expect(fleetNow.policies).toEqual([{ name: 'blocked-countries', version: 1 }]);

      // operators can see what a device gets — the very same document
      const viewer = await gw.token('viewer');
      const asOperator = await gw.asUser(viewer, '/api/v1/config/fraud-rules?device_id=fraud-2');
      expect(asOperator.headers.get('etag')).toBe((await rules('fraud-2')).headers.get('etag'));
      const fleetDefault = (await (
        await gw.asUser(viewer, '/api/v1/config/fraud-rules')
      ).json()) as Doc;
      expect(fleetDefault).toMatchObject({ device_id: null, selection: 'fleet_default' });
      // a device cannot ask for another device's rules
      const other = await asDevice('fraud-1', '/api/v1/config/fraud-rules?device_id=fraud-2');
      expect(other.status).toBe(403);
    });

    it('keeps policy versions and validates rules by path', async () => {
      const create = (body: unknown, token = gw.adminToken) =>
        gw.asUser(token, '/api/v1/policies', { method: 'POST', body: json(body) });
      const bad = await create({
        name: 'bad',
        policy_type: 'FRAUD',
        rules: [
          { field: 'amount', op: 'in', value: 5, action: 'decline' },
          { field: 'amount', op: 'gt', value: 'big', action: 'review' },
          { field: '1x', op: 'like', value: 1, action: 'explode' },
        ],
      });
      expect(bad.status).toBe(422);
      const paths = ((await bad.json()) as { errors: { path: string }[] }).errors.map(
        (e) => e.path,
      );
      expect(paths).toEqual(
        expect.arrayContaining([
          '$.rules[0].value',
          '$.rules[1].value',
          '$.rules[2].field',
          '$.rules[2].op',
          '$.rules[2].action',
        ]),
      );
      const body = {
        name: 'limits',
        policy_type: 'BUSINESS',
        rules: [{ field: 'amount_minor', op: 'lt', value: 100, action: 'allow' }],
        description: 'small tickets',
      };
      expect((await create(body)).status).toBe(201);
      const duplicate = await create(body);
      expect(duplicate.status).toBe(409);
      expect(await duplicate.json()).toMatchObject({ code: 'POLICY_EXISTS' });
      const viewer = await gw.token('viewer');
      expect((await create({ ...body, name: 'other' }, viewer)).status).toBe(403);

      await gw.asUser(gw.adminToken, '/api/v1/policies/limits', {
        method: 'PUT',
        body: json({ rules: [] }),
      });
      const versions = (await (
        await gw.asUser(viewer, '/api/v1/policies/limits/versions')
      ).json()) as { versions: { version: number; rules: unknown[]; description: string }[] };
      expect(versions.versions.map((v) => [v.version, v.rules.length, v.description])).toEqual([
        [2, 0, 'small tickets'],
        [1, 1, 'small tickets'],
      ]);
      const first = await gw.asUser(viewer, '/api/v1/policies/limits?version=1');
      expect(await first.json()).toMatchObject({ version: 1 });
      const listed = (await (
        await gw.asUser(viewer, '/api/v1/policies?policy_type=BUSINESS')
      ).json()) as { policies: { name: string; version: number }[] };
      expect(listed.policies.find((p) => p.name === 'limits')?.version).toBe(2);
      expect((await gw.asUser(viewer, '/api/v1/policies/nothing')).status).toBe(404);
      expect(
        (
          await gw.asUser(gw.adminToken, '/api/v1/policies/nothing', {
            method: 'PUT',
            body: json({ rules: [] }),
          })
        ).status,
      ).toBe(404);
    });

    it('assigns targets to a device, which the signed config document carries', async () => {
      await register('asg-1', 'ASG');
      await register('asg-2', 'ASG');
      const base = '/api/v1/devices/asg-1/assignments';
      const assign = (body: unknown, token = gw.adminToken) =>
        gw.asUser(token, base, { method: 'POST', body: json(body) });
      const before = await deviceConfig('asg-1');
      const etag = before.headers.get('etag')!;

      const wasm = 'a'.repeat(64);
      const created = await assign({
        assignment_type: 'WASM',
        target_id: wasm,
        parameters: { slot: 1 },
      });
      expect(created.status).toBe(201);
      const assignment = (await created.json()) as { assignment_id: string };
      expect(
        (await assign({ assignment_type: 'WORKFLOW', target_id: 'payment_authorization' })).status,
      ).toBe(201);
      const duplicate = await assign({ assignment_type: 'WASM', target_id: wasm });
      expect(duplicate.status).toBe(409);
      expect(await duplicate.json()).toMatchObject({ code: 'ASSIGNMENT_EXISTS' });
      const badHash = await assign({ assignment_type: 'WASM', target_id: 'not-a-hash' });
      expect(badHash.status).toBe(422);
      expect(await badHash.json()).toMatchObject({ errors: [{ path: '$.target_id' }] });
      const unknownPolicy = await assign({ assignment_type: 'POLICY', target_id: 'no-such' });
      expect(unknownPolicy.status).toBe(422);
      expect(await unknownPolicy.json()).toMatchObject({ code: 'UNKNOWN_POLICY' });
      const viewer = await gw.token('viewer');
      expect((await assign({ assignment_type: 'CONFIG', target_id: 'x' }, viewer)).status).toBe(
        403,
      );
      expect(
        (
          await gw.asUser(gw.adminToken, '/api/v1/devices/ghost/assignments', {
            method: 'POST',
            body: json({ assignment_type: 'CONFIG', target_id: 'x' }),
          })
        ).status,
      ).toBe(404);

      // the device reads its own assignments, not another device's
      const own = await asDevice('asg-1', base);
      expect(own.status).toBe(200);
      const list = (await own.json()) as { assignments: { assignment_type: string }[] };
      expect(list.assignments.map((a) => a.assignment_type)).toEqual(['WASM', 'WORKFLOW']);
      expect((await asDevice('asg-2', base)).status).toBe(403);

      const after = await deviceConfig('asg-1', { 'if-none-match': etag });
      expect(after.status).toBe(200);
      expect(((await after.json()) as Doc).assignments).toEqual([
        { assignment_type: 'WASM', target_id: wasm, parameters: { slot: 1 } },
        { assignment_type: 'WORKFLOW', target_id: 'payment_authorization', parameters: {} },
      ]);

      const remove = (id: string) =>
        gw.asUser(gw.adminToken, `${base}/${id}`, { method: 'DELETE' });
      expect((await remove(assignment.assignment_id)).status).toBe(204);
      expect((await remove(assignment.assignment_id)).status).toBe(404);
      // another device's assignment id does not resolve under this device
      const mine = (await (await asDevice('asg-1', base)).json()) as {
        assignments: { assignment_id: string }[];
      };
      const foreign = await gw.asUser(
        gw.adminToken,
        `/api/v1/devices/asg-2/assignments/${mine.assignments[0]!.assignment_id}`,
        { method: 'DELETE' },
      );
      expect(foreign.status).toBe(404);
    });

    it('deletes a policy together with the assignments that name it', async () => {
      await register('pdel-1', 'PDEL');
      await gw.asUser(gw.adminToken, '/api/v1/policies', {
        method: 'POST',
        body: json({ name: 'temp', policy_type: 'FRAUD', rules: [] }),
      });
      await gw.asUser(gw.adminToken, '/api/v1/devices/pdel-1/assignments', {
        method: 'POST',
        body: json({ assignment_type: 'POLICY', target_id: 'temp' }),
      });
      const operator = await gw.token('operator');
      const del = await gw.asUser(operator, '/api/v1/policies/temp', { method: 'DELETE' });
      expect(del.status).toBe(204);
      const list = (await (
        await gw.asUser(operator, '/api/v1/devices/pdel-1/assignments')
      ).json()) as { assignments: unknown[] };
      expect(list.assignments).toEqual([]);
      expect(
        (await gw.asUser(operator, '/api/v1/policies/temp', { method: 'DELETE' })).status,
      ).toBe(404);
    });
  });
}
