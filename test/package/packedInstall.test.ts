/**
 * The package as a new user gets it: `npm run build`, `npm pack`, then `npm install` of the
 * tarball into a fresh host project with a clean npm configuration (an empty user .npmrc and
 * none of this checkout's install settings; only the machine's registry and Node headers
 * directory, read from its npm and passed explicitly). The host then runs the CLI through
 * `npx saffron`, embeds the engine from a `.mjs` file, and type-checks a `.ts` file against
 * the published declarations with `skipLibCheck: false`.
 *
 * Slow (an install that compiles better-sqlite3): minutes, not seconds.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE = '@saffron-dev/saffron';
const INSTALL_TIMEOUT_MS = 20 * 60_000;
// each step starts node processes (npx, tsc) on a machine that may be busy
const STEP_TIMEOUT_MS = 5 * 60_000;
const OPTIONAL = ['onnxruntime-node', '@electric-sql/pglite', 'kysely-pglite-dialect', 'fastify'];

/** This process's environment without any npm setting it inherited (npm_config_* from .npmrc). */
function cleanEnv(userconfig: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const k = key.toLowerCase();
    if (k.startsWith('npm_') || k.startsWith('onnxruntime_node_install')) continue;
    env[key] = value;
  }
  env.npm_config_userconfig = userconfig;
  return env;
}

/** A setting of this machine's npm (as the checkout sees it), or undefined when unset. */
function machineNpmConfig(key: string): string | undefined {
  const value = execFileSync('npm', ['config', 'get', key], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
  return value === '' || value === 'undefined' || value === 'null' ? undefined : value;
}

const WORKFLOW = [
  'workflow_type: hello',
  'steps:',
  '  - { name: greet, type: STANDARD, function: steps.greet }',
  '',
].join('\n');
const STEPS = "export const greet = (state) => ({ greeting: `hello ${state.name ?? 'world'}` });\n";

const ENGINE_MJS = `
import { createRuntime, ensureEdgeSchema, openStore } from '${PACKAGE}';

const store = await openStore(process.argv[2]);
await ensureEdgeSchema(store);
const runtime = createRuntime({ store, stepsRoot: process.cwd() });
await runtime.registry.registerDirectory(process.cwd());
const started = await runtime.start('hello', { name: 'host' }, { idempotencyKey: 'host-1' });
const settled = await runtime.runUntilSettled(started.id, started);
process.stdout.write(JSON.stringify({ status: settled.status, state: settled.state }));
await runtime.close();
await store.close();
`;

const HOST_TS = `
import {
  createRuntime,
  ensureEdgeSchema,
  openStore,
  SaffronError,
  type Runtime,
  type Store,
  type WorkflowRecord,
} from '${PACKAGE}';
import { STEP_KINDS } from '${PACKAGE}/runtime';
import { migrations } from '${PACKAGE}/migrations';

export async function runHello(file: string): Promise<WorkflowRecord['status']> {
  const store: Store = await openStore(file);
  await ensureEdgeSchema(store);
  const runtime: Runtime = createRuntime({ store, stepsRoot: '.' });
  try {
    const started = await runtime.start('hello', { name: 'typed' });
    return (await runtime.runUntilSettled(started.id, started)).status;
  } catch (error) {
    if (error instanceof SaffronError) return error.code === 'X' ? 'FAILED' : 'FAILED';
    throw error;
  } finally {
    await runtime.close();
    await store.close();
  }
}

export const kinds: readonly string[] = STEP_KINDS;
export const migrationCount: number = migrations.length;
`;

const HOST_TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  },
  files: ['host.ts'],
};

let work = '';
let host = '';
let env: NodeJS.ProcessEnv = {};

function inHost(command: string, args: readonly string[]) {
  return spawnSync(command, args, { cwd: host, env, encoding: 'utf8' });
}
const saffron = (...args: string[]) => inHost('npx', ['--no-install', 'saffron', ...args]);
const explain = (r: ReturnType<typeof inHost>) => `exit ${r.status}\n${r.stdout}\n${r.stderr}`;

describe('the packed tarball in a host project', () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'saffron-pack-'));
    host = join(work, 'host');
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
    // the build just ran; --ignore-scripts keeps `prepare` from building a second time
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as { filename: string }[];
    const tarball = join(work, packed[0]!.filename);

    execFileSync('mkdir', ['-p', host]);
    writeFileSync(
      join(host, 'package.json'),
      JSON.stringify({ name: 'saffron-host', private: true, type: 'module' }, null, 2),
    );
    writeFileSync(join(host, '.npmrc'), '');
    writeFileSync(join(host, 'hello.yaml'), WORKFLOW);
    writeFileSync(join(host, 'steps.mjs'), STEPS);
    writeFileSync(join(host, 'engine.mjs'), ENGINE_MJS);
    writeFileSync(join(host, 'host.ts'), HOST_TS);
    writeFileSync(join(host, 'tsconfig.json'), JSON.stringify(HOST_TSCONFIG, null, 2));

    const registry = machineNpmConfig('registry');
    // Node's headers for a native build from source, where the machine keeps them (a machine
    // without a route to nodejs.org cannot download them)
    const nodedir = machineNpmConfig('nodedir');
    env = cleanEnv(join(host, '.npmrc'));
    const install = inHost('npm', [
      'install',
      '--no-audit',
      '--no-fund',
      ...(registry ? [`--registry=${registry}`] : []),
      ...(nodedir ? [`--nodedir=${nodedir}`] : []),
      tarball,
      // the host's own types for Node, as any TypeScript host on Node has
      '@types/node@20',
    ]);
    if (install.status !== 0) throw new Error(`npm install failed: ${explain(install)}`);
  }, INSTALL_TIMEOUT_MS);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    'installs without the optional packages (ONNX Runtime, PGlite, fastify)',
    () => {
      for (const name of OPTIONAL) expect(existsSync(join(host, 'node_modules', name))).toBe(false);
      const lock = readFileSync(join(host, 'package-lock.json'), 'utf8');
      expect(lock).not.toContain('node_modules/onnxruntime-node');
      expect(existsSync(join(host, 'node_modules', PACKAGE, 'dist/index.js'))).toBe(true);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'runs `saffron --help` and `--version`',
    () => {
      const help = saffron('--help');
      expect(help.status, explain(help)).toBe(0);
      expect(help.stdout).toMatch(/^ {2}validate \[options\] <files\.\.\.>/m);
      expect(help.stdout).toMatch(/^ {2}cloud /m);
      const version = saffron('--version');
      expect(version.status, explain(version)).toBe(0);
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        version: string;
      };
      expect(version.stdout.trim()).toBe(pkg.version);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'validates a workflow and runs it on SQLite',
    () => {
      const validated = saffron('validate', 'hello.yaml');
      expect(validated.status, explain(validated)).toBe(0);
      expect(validated.stdout).toContain('hello');
      const run = saffron(
        'run',
        'hello.yaml',
        '--db',
        'cli.db',
        '--data',
        '{"name":"cli"}',
        '--json',
      );
      expect(run.status, explain(run)).toBe(0);
      const record = JSON.parse(run.stdout) as { status: string; state: { greeting?: string } };
      expect(record.status).toBe('COMPLETED');
      expect(record.state.greeting).toBe('hello cli');
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'loads the commands that use wabt and fastify (demo, cloud)',
    () => {
      // both modules are imported to register their options; demo compiles WAT with wabt
      for (const command of ['demo', 'cloud']) {
        const help = saffron(command, '--help');
        expect(help.status, explain(help)).toBe(0);
        expect(help.stdout).toContain(`saffron ${command}`);
      }
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'names the package to install when an optional one is needed',
    () => {
      const run = saffron('run', 'hello.yaml', '--db', 'pglite:pg-data');
      expect(run.status).not.toBe(0);
      expect(run.stderr + run.stdout).toMatch(
        /DEPENDENCY_MISSING[\s\S]*npm install @electric-sql\/pglite kysely-pglite-dialect/,
      );
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'embeds the engine from a host module',
    () => {
      const run = inHost(process.execPath, ['engine.mjs', 'engine.db']);
      expect(run.status, explain(run)).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({
        status: 'COMPLETED',
        state: expect.objectContaining({ name: 'host', greeting: 'hello host' }) as unknown,
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'type-checks a host against the published declarations (skipLibCheck: false)',
    () => {
      const tsc = inHost(process.execPath, [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        'tsconfig.json',
      ]);
      expect(tsc.status, explain(tsc)).toBe(0);
    },
    STEP_TIMEOUT_MS,
  );
});
