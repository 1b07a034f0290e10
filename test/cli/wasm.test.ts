/**
 * `saffron wasm add | list` on every engine dialect, and `saffron run` of a workflow whose
 * WASM step uses the binary just added with the same `--db`: on SQLite it lands in
 * device_wasm_cache, on PGlite / PostgreSQL under WASM_STORAGE_DIR plus a wasm_components
 * row. A file that is not WebAssembly, a bad version tag and a missing file are refused with
 * a clear message.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { compileWatGuests, type Guest } from '../support/wasmGuests.js';
import { newTarget, TARGET_DIALECTS } from './queueHelpers.js';

const dir = mkdtempSync(join(tmpdir(), 'saffron-cli-wasm-'));
let echo: Guest;

beforeAll(async () => {
  echo = (await compileWatGuests()).echo;
  writeFileSync(join(dir, 'echo.wasm'), echo.bytes);
  writeFileSync(join(dir, 'script.sh'), '#!/bin/sh\necho not wasm\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flow = (hash: string) => `
workflow_type: wasm_cli
steps:
  - name: transform
    type: WASM
    wasm_config:
      wasm_hash: ${hash}
      state_mapping: { amount_minor: amount }
`;

interface Listed {
  binary_hash: string;
  name?: string;
  version_tag?: string;
  size_bytes: number;
}

for (const dialect of TARGET_DIALECTS) {
  describe(`saffron wasm on ${dialect}`, () => {
    it('adds a binary where `run` resolves it, lists it, and runs a workflow with it', async () => {
      const target = await newTarget(dialect, dir);
      const storage = join(dir, `storage-${dialect}`);
      const options = { cwd: dir, env: { WASM_STORAGE_DIR: storage } };
      try {
        const add = await runCli(
          [
            'wasm',
            'add',
            'echo.wasm',
            '--name',
            'echo',
            '--version-tag',
            '1.0.0',
            '--db',
            target.location,
          ],
          options,
        );
        expect(add.code, add.stderr).toBe(0);
        expect(add.stdout).toBe(`${echo.hash}\n`);
        expect(add.stderr).toContain(
          dialect === 'sqlite' ? 'device_wasm_cache' : 'wasm_components',
        );
        expect(existsSync(join(storage, `${echo.hash}.wasm`))).toBe(dialect !== 'sqlite');

        const again = await runCli(
          [
            'wasm',
            'add',
            'echo.wasm',
            '--name',
            'echo',
            '--version-tag',
            '1.0.0',
            '--db',
            target.location,
            '--json',
          ],
          options,
        );
        expect(again.code, again.stderr).toBe(0);
        expect(JSON.parse(again.stdout)).toMatchObject({
          ok: true,
          hash: echo.hash,
          created: false,
          stored_in: dialect === 'sqlite' ? 'device_wasm_cache' : 'wasm_components',
          size_bytes: echo.bytes.length,
        });

        const listed = await runCli(['wasm', 'list', '--db', target.location, '--json'], options);
        expect(listed.code, listed.stderr).toBe(0);
        const binaries = (JSON.parse(listed.stdout) as { binaries: Listed[] }).binaries;
        expect(binaries).toEqual([
          expect.objectContaining({
            binary_hash: echo.hash,
            size_bytes: echo.bytes.length,
            ...(dialect === 'sqlite' ? {} : { name: 'echo', version_tag: '1.0.0' }),
          }),
        ]);
        const table = await runCli(['wasm', 'list', '--db', target.location], options);
        expect(table.stdout.split('\n')[0]).toMatch(/^HASH\s+/);
        expect(table.stdout).toContain(echo.hash);

        writeFileSync(join(dir, `flow-${dialect}.yaml`), flow(echo.hash));
        const run = await runCli(
          [
            'run',
            `flow-${dialect}.yaml`,
            '--db',
            target.location,
            '--executor',
            'inline',
            '--json',
            '--data',
            '{"amount_minor": 1250, "pan": "secret"}',
          ],
          options,
        );
        expect(run.code, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({
          status: 'COMPLETED',
          state: { amount_minor: 1250, echo: { amount: 1250 }, guest: 'wat' },
        });
      } finally {
        await target.drop();
      }
    });
  });
}

describe('saffron wasm add refusals', () => {
  it('refuses a file that is not WebAssembly, a bad version tag and a missing file', async () => {
    const db = join(dir, 'refusals.db');
    const add = (file: string, version = '1.0.0') =>
      runCli(['wasm', 'add', file, '--name', 'x', '--version-tag', version, '--db', db], {
        cwd: dir,
      });
    const script = await add('script.sh');
    expect(script.code).toBe(1);
    expect(script.stderr).toContain(
      'saffron: error: WASM_INVALID_MODULE: not a WebAssembly module',
    );
    const version = await add('echo.wasm', 'latest');
    expect(version.code).toBe(1);
    expect(version.stderr).toContain('WASM_VERSION_INVALID');
    const missing = await add('nope.wasm');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read nope.wasm: no such file');
    const noName = await runCli(
      ['wasm', 'add', 'echo.wasm', '--version-tag', '1.0.0', '--db', db],
      { cwd: dir },
    );
    expect(noName.code).toBe(2);
    const empty = await runCli(['wasm', 'list', '--db', db], { cwd: dir });
    expect(empty.stdout).toBe('no WASM binaries\n');
  });
});
