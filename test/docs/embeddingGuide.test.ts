/**
 * The embedding guide stays true to the API: every `ts` block of docs/guides/embedding.md is
 * type-checked with the project's strict settings (the package name mapped onto this
 * checkout), and the block tagged `saffron-program` runs in a folder of its own, printing
 * exactly what its `// →` comments say.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const guide = readFileSync(join(root, 'docs/guides/embedding.md'), 'utf8');
const blocks = [...guide.matchAll(/```ts( saffron-program)?\n([\s\S]*?)```/g)].map((m) => ({
  program: m[1] !== undefined,
  code: m[2]!,
}));
const PACKAGE = '@saffron-dev/saffron';

describe('embedding guide', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'saffron-embedding-'));
    cpSync(join(root, 'examples'), join(dir, 'examples'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const config = {
      extends: join(root, 'tsconfig.json'),
      compilerOptions: {
        noEmit: true,
        rootDir: '/',
        typeRoots: [join(root, 'node_modules/@types')],
        paths: {
          [PACKAGE]: [join(root, 'index.ts')],
          [`${PACKAGE}/*`]: [join(root, '*/index.ts')],
        },
      },
      include: ['*.ts'],
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config, null, 2));
    blocks.forEach((block, i) => writeFileSync(join(dir, `block${i}.ts`), block.code));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has a complete program and other examples', () => {
    expect(blocks.filter((b) => b.program)).toHaveLength(1);
    expect(blocks.length).toBeGreaterThan(1);
    for (const block of blocks) expect(block.code).toContain(`from '${PACKAGE}'`);
  });

  it('type-checks every example against the real API', async () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], {
      cwd: dir,
    }).then(
      () => '',
      (error: Error & { stdout?: string }) => error.stdout ?? error.message,
    );
    expect(result).toBe('');
  }, 120_000);

  it('runs the complete program and prints what its comments say', async () => {
    const index = blocks.findIndex((b) => b.program);
    const expected = [...blocks[index]!.code.matchAll(/^\s*\/\/ → (.*)$/gm)].map((m) => m[1]);
    expect(expected.length).toBeGreaterThan(0);
    const tsx = join(root, 'node_modules/tsx/dist/esm/index.mjs');
    const { stdout } = await run(process.execPath, ['--import', tsx, `block${index}.ts`], {
      cwd: dir,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(dir, 'tsconfig.json') },
    });
    expect(stdout.trim().split('\n')).toEqual(expected);
  }, 60_000);
});
