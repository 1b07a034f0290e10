/**
 * `saffron cloud serve`: the control plane — HTTP API, device WebSocket gateway, and (unless
 * `--no-worker`) a worker loop running queued tasks and cluster maintenance — on PostgreSQL
 * or embedded PGlite. `saffron users create`: an operator API token, printed once;
 * `saffron users list` and `saffron users revoke`.
 */
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { createRuntime, parseInspectUrl } from '../../actors/index.js';
import {
  createApiToken,
  createGateway,
  listApiTokens,
  loadKeyring,
  revokeApiToken,
  TOKENS_CHANGED,
  USER_ROLES,
  workflowWebhookHook,
  type UserRole,
} from '../../gateway/index.js';
import {
  destinationOptionsFromEnv,
  envSecrets,
  notifyChange,
  wasmStorageDir,
} from '../../runtime/index.js';
import { registerWorkflowFolder } from '../definitions.js';
import { openCloudStore } from '../engineStore.js';
import { CliExit, type CliIo } from '../io.js';
import type { DatabaseOptions } from '../storeOption.js';
import { createWorkflowRegistry } from '../../actors/index.js';
import { untilSignal } from '../signals.js';
import { serverTimeouts, timeoutOptions, type TimeoutFlags } from '../timeoutOptions.js';

interface ServeOptions extends DatabaseOptions, TimeoutFlags {
  port?: string;
  host?: string;
  steps?: string;
  workflows?: string[];
  worker?: boolean;
  logLevel?: string;
  inspect?: URL;
}

/** Where the cloud keeps its keys: SAFFRON_KEYS_DIR, else `keys` beside the data directory. */
export function keysDir(io: CliIo): string {
  if (io.env.SAFFRON_KEYS_DIR) return resolve(io.cwd, io.env.SAFFRON_KEYS_DIR);
  const data = resolve(io.cwd, io.env.SAFFRON_DATA_DIR ?? '.saffron/cloud');
  return join(dirname(data), 'keys');
}

function port(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new CliExit(2, `--port must be an integer from 0 to 65535, got '${value}'`);
  return n;
}

async function serve(options: ServeOptions, io: CliIo): Promise<void> {
  const listenPort = port(options.port ?? io.env.PORT, 8080);
  const timeouts = serverTimeouts(options, io.env);
  const store = await openCloudStore(options, io);
  try {
    const stepsRoot = resolve(io.cwd, options.steps ?? io.env.SAFFRON_STEPS_DIR ?? '.');
    const registry = createWorkflowRegistry();
    for (const dir of options.workflows ?? [])
      await registerWorkflowFolder(io, registry, dir, stepsRoot, { strict: true });
    const runtime = createRuntime({
      store,
      stepsRoot,
      registry,
      secrets: envSecrets(io.env),
      outbound: destinationOptionsFromEnv(io.env),
      runTasks: options.worker !== false,
      onSettled: workflowWebhookHook(),
      ...(options.inspect ? { inspect: options.inspect } : {}),
    });
    const gateway = await createGateway({
      store,
      keys: loadKeyring(keysDir(io), io.env),
      runtime,
      stepsRoot,
      outbound: destinationOptionsFromEnv(io.env),
      wasmStorageDir: wasmStorageDir(io.env, io.cwd),
      timeouts,
      logger: { level: options.logLevel ?? 'info' },
    });
    // handlers first: a signal that arrives while starting still drains cleanly
    const stopped = untilSignal();
    const worker = options.worker === false ? undefined : runtime.serve({});
    const url = await gateway.listen(listenPort, options.host ?? '127.0.0.1');
    io.stderr.write(`saffron cloud: listening on ${url} (Ctrl-C stops)\n`);
    io.stdout.write(`${JSON.stringify({ listening: url })}\n`);
    const signal = await stopped;
    io.stderr.write(`saffron cloud: ${signal}, draining\n`);
    await gateway.close();
    await worker?.stop();
    await runtime.close();
  } finally {
    await store.close();
  }
}

/** Register `cloud` and `users`. */
export function registerCloudCommands(program: Command, io: CliIo): void {
  const cloud = program.command('cloud').description('the cloud control plane');
  const serveCommand = cloud
    .command('serve')
    .description('serve the HTTP API and device gateway until SIGINT/SIGTERM')
    .option('--port <port>', 'TCP port (default: PORT, else 8080; 0 picks a free one)')
    .option('--host <host>', 'interface to bind (default 127.0.0.1)')
    .option(
      '--db <location>',
      'postgres://… URL or pglite:DIR (default: DATABASE_URL, else embedded PGlite)',
    )
    .option('--database-url <url>', 'alias of --db')
    .option(
      '--steps <dir>',
      'root of step modules (default: SAFFRON_STEPS_DIR, else the working directory)',
    )
    .option(
      '--workflows <dir>',
      'register the workflow YAML files of this folder; repeatable',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option('--no-worker', 'do not run queued tasks and maintenance in this process')
    .option('--log-level <level>', 'pino log level (default info)')
    .option(
      '--inspect <url>',
      'stream workflow statecharts to Stately’s inspector at this ws:// or wss:// URL',
      parseInspectUrl,
    );
  timeoutOptions(serveCommand).action((options: ServeOptions) => serve(options, io));

  const users = program.command('users').description('operator accounts (API tokens)');
  const userCommand = (name: string, description: string) =>
    users
      .command(name)
      .description(description)
      .option(
        '--db <location>',
        'postgres://… URL or pglite:DIR (default: DATABASE_URL, else embedded PGlite)',
      )
      .option('--database-url <url>', 'alias of --db');
  userCommand('create', 'create an operator API token (printed once)')
    .requiredOption('--name <name>', 'who the token is for')
    .requiredOption('--role <role>', `one of ${USER_ROLES.join(', ')}`)
    .option('--json', 'print {token, token_id, name, role} as JSON')
    .action(async (options: DatabaseOptions & { name: string; role: string; json?: boolean }) => {
      if (!(USER_ROLES as readonly string[]).includes(options.role))
        throw new CliExit(
          2,
          `--role must be one of ${USER_ROLES.join(', ')}, got '${options.role}'`,
        );
      if (options.name.trim() === '' || options.name.length > 200)
        throw new CliExit(2, '--name must be 1 to 200 characters');
      const store = await openCloudStore(options, io, 2);
      try {
        const created = await createApiToken(store, {
          name: options.name,
          role: options.role as UserRole,
        });
        if (options.json)
          io.stdout.write(
            `${JSON.stringify({ token: created.token, token_id: created.tokenId, name: created.name, role: created.role })}\n`,
          );
        else {
          io.stdout.write(`${created.token}\n`);
          io.stderr.write(
            `token for ${created.name} (${created.role}); it is shown only now — store it safely\n`,
          );
        }
      } finally {
        await store.close();
      }
    });
  userCommand('list', 'list operator API tokens (ids, names, roles; never the tokens)')
    .option('--json', 'print one JSON object per token')
    .action(async (options: DatabaseOptions & { json?: boolean }) => {
      const store = await openCloudStore(options, io, 2);
      try {
        for (const t of await listApiTokens(store)) {
          const state = t.revokedAt
            ? 'revoked'
            : t.expiresAt && t.expiresAt <= new Date()
              ? 'expired'
              : 'active';
          io.stdout.write(
            options.json
              ? `${JSON.stringify({ token_id: t.tokenId, name: t.name, role: t.role, prefix: t.prefix, state, created_at: t.createdAt.toISOString(), expires_at: t.expiresAt?.toISOString() ?? null, revoked_at: t.revokedAt?.toISOString() ?? null })}\n`
              : `${t.tokenId}  ${t.prefix ?? ''}…  ${t.role}  ${state}  ${t.name}\n`,
          );
        }
      } finally {
        await store.close();
      }
    });
  userCommand(
    'revoke',
    'revoke an operator API token: every running gateway refuses it from the commit',
  )
    .requiredOption('--token-id <uuid>', 'the token to revoke (saffron users list)')
    .action(async (options: DatabaseOptions & { tokenId: string }) => {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(options.tokenId))
        throw new CliExit(2, `--token-id must be a token's UUID, got '${options.tokenId}'`);
      const store = await openCloudStore(options, io, 2);
      try {
        // announced in the revoking transaction: running gateways drop the token at the commit
        const revoked = await store.transaction(async (tx) => {
          const done = await revokeApiToken(tx, options.tokenId, new Date());
          if (done) await notifyChange(tx, TOKENS_CHANGED);
          return done;
        });
        if (!revoked) throw new CliExit(1, `no unrevoked API token ${options.tokenId}`);
        io.stderr.write(`token ${options.tokenId} revoked\n`);
      } finally {
        await store.close();
      }
    });
}
