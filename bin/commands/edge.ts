/**
 * `saffron edge run`: the agent a payment terminal runs (edge/agent) with the local API for
 * the POS on 127.0.0.1 (edge/local), until SIGINT/SIGTERM. It prints `{listening, device_id}`
 * on stdout once the local API is up and logs one JSON object per line on stderr.
 *
 * The cloud URL must be HTTPS unless its host is loopback or `--insecure-cloud-url` is given.
 * `--cloud-public-key FILE` provisions the cloud's key (PEM, or the JSON of `GET
 * /api/v1/config/public-key`), so nothing is pinned blind; without it the key the cloud gives
 * on first contact is pinned, with a warning.
 *
 * Exit codes: 0 after a signal (everything stopped cleanly), 75 (EX_TEMPFAIL) after a REBOOT
 * command — the agent has stopped cleanly and its supervisor is expected to start it again
 * (systemd: `Restart=on-failure` or `RestartForceExitStatus=75`), 1 when it cannot start.
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import {
  checkCloudUrl,
  createEdgeAgent,
  parseCloudPublicKey,
  createLocalApi,
  loadCardKey,
  loadLocalToken,
  type AgentLogEntry,
  type AgentLogLevel,
} from '../../edge/index.js';
import { parseInspectUrl } from '../../actors/index.js';
import { destinationOptionsFromEnv, envSecrets, toError } from '../../runtime/index.js';
import { CliExit, type CliIo } from '../io.js';
import { waitForSignal } from '../signals.js';

/** The exit code asking a supervisor to start the agent again (EX_TEMPFAIL). */
export const EDGE_RESTART_EXIT_CODE = 75;

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

interface EdgeRunOptions {
  deviceId: string;
  cloudUrl: string;
  secretFile: string;
  db?: string;
  localPort?: string;
  localTokenFile?: string;
  workflows?: string[];
  steps?: string;
  executor?: 'inline' | 'threads';
  stepDurability?: 'every-step' | 'boundaries';
  cloudPublicKey?: string;
  cloudPublicKeyFile?: string;
  insecureCloudUrl?: boolean;
  cardKeyFile?: string;
  maxBackoffSeconds?: string;
  syncJitterSeconds?: string;
  safBatchSize?: string;
  metricsIntervalSeconds?: string;
  commandPollSeconds?: string;
  logLevel?: AgentLogLevel;
  inspect?: URL;
}

function integer(name: string, value: string | undefined, min: number, max: number) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new CliExit(2, `--${name} must be an integer from ${min} to ${max}, got '${value}'`);
  return n;
}

function readSecretFile(io: CliIo, file: string, what: string): string {
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliExit(
      2,
      `cannot read ${what} ${file}: ${code === 'ENOENT' ? 'no such file' : String(code)}`,
    );
  }
  if (text === '') throw new CliExit(2, `${what} ${file} is empty`);
  if ((statSync(path).mode & 0o077) !== 0)
    io.stderr.write(
      `saffron edge: warning: ${what} ${file} is readable by other users (chmod 600 it)\n`,
    );
  return text;
}

/** The cloud key provisioned in `file` (PEM or the cloud's published JSON), as PEM. */
function readCloudKey(io: CliIo, file: string): string {
  let text: string;
  try {
    text = readFileSync(resolve(io.cwd, file), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliExit(
      2,
      `cannot read --cloud-public-key ${file}: ${code === 'ENOENT' ? 'no such file' : String(code)}`,
    );
  }
  try {
    return parseCloudPublicKey(text);
  } catch (error) {
    throw new CliExit(2, `--cloud-public-key ${file}: ${toError(error).message}`);
  }
}

async function run(options: EdgeRunOptions, io: CliIo): Promise<void> {
  const localPort = integer('local-port', options.localPort, 0, 65535) ?? 7420;
  const maxBackoff = integer('max-backoff-seconds', options.maxBackoffSeconds, 1, 3600);
  const jitter = integer('sync-jitter-seconds', options.syncJitterSeconds, 0, 3600);
  const batch = integer('saf-batch-size', options.safBatchSize, 1, 500);
  const metricsEvery = integer(
    'metrics-interval-seconds',
    options.metricsIntervalSeconds,
    1,
    86_400,
  );
  const pollEvery = integer('command-poll-seconds', options.commandPollSeconds, 1, 3600);
  try {
    new URL(options.cloudUrl);
  } catch {
    throw new CliExit(2, `--cloud-url is not a URL: '${options.cloudUrl}'`);
  }
  try {
    checkCloudUrl(options.cloudUrl, options.insecureCloudUrl === true);
  } catch (error) {
    throw new CliExit(2, `--cloud-url: ${toError(error).message}`);
  }
  const dbPath = resolve(io.cwd, options.db ?? '.saffron/edge.db');
  const dataDir = dirname(dbPath);
  const workflowDirs = (options.workflows ?? []).map((d) => resolve(io.cwd, d));
  const stepsRoot = resolve(
    io.cwd,
    options.steps ?? io.env.SAFFRON_STEPS_DIR ?? workflowDirs[0] ?? '.',
  );
  const threshold = LOG_LEVELS.indexOf(options.logLevel ?? 'info');
  const log = (entry: AgentLogEntry) => {
    if (LOG_LEVELS.indexOf(entry.level) < threshold) return;
    io.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
  };

  const secret = readSecretFile(io, options.secretFile, 'device secret file');
  const keyFile = options.cloudPublicKey ?? options.cloudPublicKeyFile;
  const cloudPublicKeyPem = keyFile === undefined ? undefined : readCloudKey(io, keyFile);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const cardKey = loadCardKey(resolve(io.cwd, options.cardKeyFile ?? join(dataDir, 'card.key')));
  if (cardKey.created)
    log({
      level: 'warn',
      event: 'edge.card_key.created',
      msg: 'created a random card key: provision the acquirer’s key with --card-key-file to settle card payloads',
    });
  const token = loadLocalToken(
    resolve(io.cwd, options.localTokenFile ?? join(dataDir, 'local-token')),
  );
  if (token.created)
    log({
      level: 'info',
      event: 'edge.local_token.created',
      msg: 'created the local API token file',
    });
  if (token.exposed)
    log({
      level: 'warn',
      event: 'edge.local_token.exposed',
      msg: 'the local API token file is readable by other users (chmod 600 it)',
    });

  let restartRequested: (() => void) | undefined;
  const restart = new Promise<'restart'>((resolveRestart) => {
    restartRequested = () => resolveRestart('restart');
  });
  // HTTP steps never reach the local API, even when loopback is allowed; 0 = the port listen picks
  let apiPort = localPort;
  const signal = waitForSignal(); // before starting: a signal during start still stops cleanly
  const agent = createEdgeAgent({
    deviceId: options.deviceId,
    deviceSecret: secret,
    cloudUrl: options.cloudUrl,
    ...(options.insecureCloudUrl === true ? { insecureCloudUrl: true } : {}),
    dbPath,
    cardKey: cardKey.key,
    stepsRoot,
    workflowDirs,
    executor: options.executor ?? 'inline',
    stepDurability: options.stepDurability ?? 'boundaries',
    ...(cloudPublicKeyPem !== undefined ? { cloudPublicKeyPem } : {}),
    secrets: envSecrets(io.env),
    outbound: { ...destinationOptionsFromEnv(io.env), refusedLocalPorts: () => [apiPort] },
    ...(maxBackoff !== undefined ? { maxBackoffMs: maxBackoff * 1000 } : {}),
    ...(jitter !== undefined ? { syncJitterMs: jitter * 1000 } : {}),
    ...(batch !== undefined ? { safBatchSize: batch } : {}),
    ...(metricsEvery !== undefined ? { metricsIntervalMs: metricsEvery * 1000 } : {}),
    ...(pollEvery !== undefined ? { commandPollIntervalMs: pollEvery * 1000 } : {}),
    onRestart: () => restartRequested?.(),
    log,
    ...(options.inspect ? { inspect: options.inspect } : {}),
  });
  try {
    await agent.start();
    const api = createLocalApi({ agent, token: token.token });
    try {
      const url = await api.listen(localPort, '127.0.0.1');
      apiPort = Number(new URL(url).port);
      log({ level: 'info', event: 'edge.local_api.listening', msg: `local API on ${url}` });
      io.stdout.write(`${JSON.stringify({ listening: url, device_id: options.deviceId })}\n`);
      const outcome = await Promise.race([signal.promise, restart]);
      log({
        level: 'info',
        event: 'edge.stopping',
        msg: outcome === 'restart' ? 'restarting on REBOOT' : `${outcome}: stopping`,
      });
      await api.close();
      await agent.stop();
      if (outcome === 'restart') throw new CliExit(EDGE_RESTART_EXIT_CODE);
    } finally {
      await api.close();
    }
  } finally {
    signal.dispose();
    await agent.stop();
  }
}

/** Register `edge run`. */
export function registerEdgeCommands(program: Command, io: CliIo): void {
  const edge = program.command('edge').description('the edge agent of a payment terminal');
  edge
    .command('run')
    .description(
      'run the edge agent and its local POS API until SIGINT/SIGTERM (exit 75 after a REBOOT command)',
    )
    .requiredOption('--device-id <id>', 'this device’s id (from registration)')
    .requiredOption(
      '--cloud-url <url>',
      'base URL of the cloud, e.g. https://saffron.example.com (https://, or http:// to a loopback host only)',
    )
    .option(
      '--insecure-cloud-url',
      'allow a plain http:// cloud URL to a host that is not loopback (card data and device signatures then cross the network unencrypted)',
    )
    .requiredOption('--secret-file <file>', 'file holding the device secret (mode 600)')
    .option('--db <file>', 'SQLite database file (default ./.saffron/edge.db)')
    .option('--local-port <port>', 'port of the local API on 127.0.0.1 (default 7420; 0 = any)')
    .option(
      '--local-token-file <file>',
      'bearer token of the local API; created with a random token when missing (default: local-token beside the database)',
    )
    .option(
      '--workflows <dir>',
      'workflow YAML files installed on the device; repeatable',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option(
      '--steps <dir>',
      'root of step modules (default: SAFFRON_STEPS_DIR, else the first --workflows folder)',
    )
    .addOption(
      new Option('--executor <kind>', 'where step functions run (default inline)').choices([
        'inline',
        'threads',
      ]),
    )
    .addOption(
      new Option(
        '--step-durability <when>',
        'when step commits reach the disk: every-step, or boundaries (default: start, end with its SAF record, waits; the steps in between are held and written with them, and a crash or power cut may repeat them)',
      ).choices(['every-step', 'boundaries']),
    )
    .option(
      '--cloud-public-key <file>',
      'the cloud’s Ed25519 public key, PEM or the JSON of GET /api/v1/config/public-key: configuration, definitions and commands are verified with it, it must match a key pinned earlier, and no key is fetched; default: the key the cloud gives on first contact is pinned (a warning is logged)',
    )
    .addOption(
      new Option('--cloud-public-key-file <file>', 'former name of --cloud-public-key').hideHelp(),
    )
    .option(
      '--card-key-file <file>',
      'AES-256 key (64 hex digits) for card payloads of offline records (default: card.key beside the database, created when missing)',
    )
    .option('--max-backoff-seconds <n>', 'longest wait between reconnects and retries (default 60)')
    .option(
      '--sync-jitter-seconds <n>',
      'largest random delay of the first upload after an outage (default 30)',
    )
    .option('--saf-batch-size <n>', 'records per upload (default 100, at most 500)')
    .option('--metrics-interval-seconds <n>', 'period of the metrics report (default 300)')
    .option(
      '--command-poll-seconds <n>',
      'command poll period while the socket is down (default 30)',
    )
    .addOption(
      new Option('--log-level <level>', 'least severe log entry written (default info)').choices(
        LOG_LEVELS,
      ),
    )
    .option(
      '--inspect <url>',
      'stream workflow statecharts to Stately’s inspector at this ws:// or wss:// URL',
      parseInspectUrl,
    )
    .action((options: EdgeRunOptions) => run(options, io));
}
