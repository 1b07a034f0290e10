/**
 * Which modules a fresh Node process loads: run it with a resolve hook that records the URL
 * of every module resolved, and return the package names and the repository files among
 * them (relative to the repository root).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What a process loaded. */
export interface ModuleLoads {
  /** npm packages, by name. */
  packages: Set<string>;
  /** The repository's own files, relative to its root. */
  ours: string[];
}

/** Run `node …nodeArgs` from the repository root and report what it loaded. */
export function moduleLoads(nodeArgs: string[]): ModuleLoads {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-loads-'));
  try {
    writeFileSync(
      join(dir, 'hooks.mjs'),
      [
        "import { appendFileSync } from 'node:fs';",
        'export async function resolve(specifier, context, next) {',
        '  const result = await next(specifier, context);',
        '  appendFileSync(process.env.SAFFRON_LOAD_LOG, `${result.url}\\n`);',
        '  return result;',
        '}',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'register.mjs'),
      "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
    );
    const log = join(dir, 'loads.log');
    const child = spawnSync(
      process.execPath,
      ['--import', join(dir, 'register.mjs'), ...nodeArgs],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, SAFFRON_LOAD_LOG: log },
      },
    );
    if (child.status !== 0) throw new Error(`node ${nodeArgs.join(' ')} failed: ${child.stderr}`);
    const loaded = [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
    return {
      packages: new Set(
        loaded.flatMap((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? []),
      ),
      ours: loaded
        .filter((u) => u.startsWith('file:') && !u.includes('node_modules'))
        .map((u) => relative(ROOT, fileURLToPath(u))),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
