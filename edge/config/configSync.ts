/**
 * Config sync (spec: polling rule for config; docs/architecture.md#security, #cloud-and-edge): the device polls its signed
 * configuration and fraud rules with `If-None-Match`, and loads a new document only after
 * checking it (checkConfigDocument.ts).
 *
 * - 200: checked, then stored in `device_config_cache` with its ETag, then handed to the
 *   agent's `onApplied` hook (which hot-reloads), then marked applied. Storing before
 *   applying means a crash in between loses nothing: the stored-but-unapplied document is
 *   applied on the next round (also after a 304), instead of the agent running on the old
 *   configuration while the cache claims the new one.
 * - 304: nothing changes.
 * - a document that fails a check is refused: the last good one stays loaded and in the
 *   cache, the refusal goes to `onRejected`, the status and `edge_sync_state`
 *   (`SYNC_STATE_KEYS.configRejection`), so an operator can see that a device is running an
 *   older configuration and why.
 *
 * The cached documents are checked again at start (a cache edited on disk is tampering too)
 * and applied before the first poll, so an offline device starts on its last good
 * configuration. Polls run on the background loop (runtime/loop): the interval comes from
 * the device configuration (`config_poll_interval_seconds`) when it names one, and a round
 * in which a document could not be polled backs off with jitter up to that interval. Polls
 * run one at a time; `pollNow` (the UPDATE_CONFIG command) runs one more after a running
 * one, which may have fetched before the change it is asked for. `stop()` waits for the
 * round in progress, so nothing is written to the store after it.
 */
import {
  createBackgroundLoop,
  documentEtag,
  SaffronError,
  toError,
  type BackoffPolicy,
  type EdgeStore,
} from '../../runtime/index.js';
import type { CloudClient } from '../cloud/cloudClient.js';
import { readSyncState, SYNC_STATE_KEYS, writeSyncState } from '../state/syncState.js';
import { systemTimers, type EdgeTimers } from '../timers/timers.js';
import { checkConfigDocument, configPollIntervalMs } from './checkConfigDocument.js';
import { markConfigApplied, readCachedConfig, saveCachedConfig } from './configCache.js';
import {
  CONFIG_DOCUMENT_NAMES,
  CONFIG_DOCUMENTS,
  type ConfigDocumentName,
  type VerifiedConfig,
} from './documents.js';
import { ConfigError, isRejectionCode, type ConfigRejectionCode } from './errors.js';

/** A refused document, as reported and stored under `SYNC_STATE_KEYS.configRejection`. */
export interface ConfigRejection {
  config_name: ConfigDocumentName;
  code: ConfigRejectionCode;
  message: string;
  /** ETag the cloud gave the refused document, when known. */
  etag: string | null;
  /** `cloud`: a download; `cache`: the cached copy failed its check at start. */
  source: 'cloud' | 'cache';
  /** ISO 8601. */
  at: string;
}

/** What one poll did to one document. */
export type ConfigPollOutcome = 'applied' | 'unchanged' | 'rejected' | 'failed';

/** The result of one poll of one document. */
export interface ConfigPollResult {
  name: ConfigDocumentName;
  outcome: ConfigPollOutcome;
  /** The ETag now held (after `applied`/`unchanged`) or offered (after `rejected`). */
  etag: string | null;
  error?: { code: string; message: string };
}

/** Events of the config sync (for logs, the agent's status and tests). */
export type ConfigSyncEvent =
  | {
      type: 'edge.config.applied';
      name: ConfigDocumentName;
      etag: string;
      revision: number;
      source: 'cloud' | 'cache';
    }
  | { type: 'edge.config.unchanged'; name: ConfigDocumentName; etag: string | null }
  | { type: 'edge.config.rejected'; rejection: ConfigRejection }
  | { type: 'edge.config.failed'; name: ConfigDocumentName; code: string; message: string }
  | { type: 'edge.config.polled'; results: ConfigPollResult[] };

/** How one document stands. */
export interface ConfigDocumentStatus {
  etag: string | null;
  revision: number | null;
  appliedAt: Date | null;
  lastOutcome: ConfigPollOutcome | null;
  lastError: { code: string; message: string } | null;
}

/** What the agent can show about its configuration. */
export interface ConfigSyncStatus {
  running: boolean;
  intervalMs: number;
  lastPollAt: Date | null;
  nextPollAt: Date | null;
  documents: Record<ConfigDocumentName, ConfigDocumentStatus>;
  lastRejection: ConfigRejection | null;
}

/** What the config sync needs. */
export interface ConfigSyncDeps {
  store: EdgeStore;
  cloud: CloudClient;
  /** The pinned cloud key (see resolveCloudPublicKey). */
  publicKeyPem: string;
  /** Documents to keep in sync (default: device configuration and fraud rules). */
  documents?: readonly ConfigDocumentName[];
  /** Hot-reload a verified, stored document. Throwing leaves it unapplied; it is retried. */
  onApplied?: (config: VerifiedConfig, context: { source: 'cloud' | 'cache' }) => unknown;
  /** A document was refused; the last good one stays. */
  onRejected?: (rejection: ConfigRejection) => unknown;
  /** Extra checks of the agent (e.g. that assigned workflows exist); throwing refuses it. */
  validate?: (config: VerifiedConfig) => unknown;
  onEvent?: (event: ConfigSyncEvent) => void;
  /** Poll interval when the configuration names none (5 min). */
  defaultIntervalMs?: number;
  /** Backoff after failed polls, capped by the interval (5 s doubling). */
  retry?: BackoffPolicy;
  /** Give up on one request after this long (30 s). */
  requestTimeoutMs?: number;
  /** Apply the cached documents at start (true). */
  applyCachedOnStart?: boolean;
  now?: () => Date;
  timers?: EdgeTimers;
  random?: () => number;
}

/** The config sync of one device. */
export interface ConfigSync {
  /** Check and apply the cached documents, then poll now and on the interval. */
  start(): Promise<void>;
  /** Stop polling; aborts a request in flight and waits for the round to end. */
  stop(): Promise<void>;
  /** Poll every document now (after a running poll); `force` ignores the held ETags. */
  pollNow(options?: { force?: boolean }): Promise<ConfigPollResult[]>;
  /** The applied document `name`, if any. */
  current(name: ConfigDocumentName): VerifiedConfig | undefined;
  status(): ConfigSyncStatus;
}

const errorInfo = (error: unknown) => {
  const e = toError(error);
  return { code: e instanceof SaffronError ? e.code : 'INTERNAL', message: e.message };
};

/** Create the config sync (not started). */
export function createConfigSync(deps: ConfigSyncDeps): ConfigSync {
  const now = deps.now ?? (() => new Date());
  const timers = deps.timers ?? systemTimers;
  const random = deps.random ?? Math.random;
  const names = deps.documents ?? CONFIG_DOCUMENT_NAMES;
  const defaultIntervalMs = deps.defaultIntervalMs ?? 300_000;
  const retry = deps.retry ?? { baseMs: 5_000, maxMs: 300_000 };
  const requestTimeoutMs = deps.requestTimeoutMs ?? 30_000;
  const deviceId = deps.cloud.deviceId;
  const emit = (event: ConfigSyncEvent) => {
    try {
      deps.onEvent?.(event);
    } catch {
      // a listener's failure is not the sync's
    }
  };

  const applied = new Map<ConfigDocumentName, VerifiedConfig>();
  const documents = {} as Record<ConfigDocumentName, ConfigDocumentStatus>;
  for (const name of names)
    documents[name] = {
      etag: null,
      revision: null,
      appliedAt: null,
      lastOutcome: null,
      lastError: null,
    };
  let lastRejection: ConfigRejection | null = null;
  let lastPollAt: Date | null = null;
  let nextPollAt: Date | null = null;
  let running = false;
  /** Checking and applying the cache at start; a round waits for it. */
  let loading: Promise<void> = Promise.resolve();
  /** The last round; loading the cache waits for it. */
  let polled: Promise<unknown> = Promise.resolve();
  /** The next round ignores the held ETags. */
  let forceNext = false;
  const requests = new Set<AbortController>();

  const intervalMs = () =>
    configPollIntervalMs(applied.get('device')?.content) ?? defaultIntervalMs;

  const reject = async (
    name: ConfigDocumentName,
    error: ConfigError,
    etag: string | null,
    source: ConfigRejection['source'],
  ): Promise<ConfigPollResult> => {
    const at = now();
    const rejection: ConfigRejection = {
      config_name: name,
      code: error.code as ConfigRejectionCode,
      message: error.message,
      etag,
      source,
      at: at.toISOString(),
    };
    lastRejection = rejection;
    await writeSyncState(deps.store, SYNC_STATE_KEYS.configRejection, rejection, at);
    emit({ type: 'edge.config.rejected', rejection });
    try {
      await deps.onRejected?.(rejection);
    } catch {
      // the refusal is recorded whatever the hook does
    }
    return { name, outcome: 'rejected', etag, error: { code: error.code, message: error.message } };
  };

  /** Check a document; a check failure is a ConfigError with a rejection code. */
  const check = async (
    name: ConfigDocumentName,
    document: unknown,
    meta: { revision: number; fetchedAt: Date; appliedAt: Date | null },
  ): Promise<VerifiedConfig> => {
    const doc = checkConfigDocument(name, document, deps.publicKeyPem, deviceId);
    const member = CONFIG_DOCUMENTS[name].member;
    const verified: VerifiedConfig = {
      name,
      etag: documentEtag(doc),
      document: doc,
      content: doc[member],
      version: typeof doc.version === 'string' ? doc.version : null,
      revision: meta.revision,
      fetchedAt: meta.fetchedAt,
      appliedAt: meta.appliedAt,
    };
    if (deps.validate) {
      try {
        await deps.validate(verified);
      } catch (error) {
        throw new ConfigError(
          'CONFIG_SCHEMA_INVALID',
          `${name}: refused by the agent: ${toError(error).message}`,
          { cause: error },
        );
      }
    }
    return verified;
  };

  const apply = async (
    config: VerifiedConfig,
    source: 'cloud' | 'cache',
  ): Promise<ConfigPollResult> => {
    try {
      await deps.onApplied?.(config, { source });
    } catch (error) {
      throw new ConfigError(
        'CONFIG_APPLY_FAILED',
        `${config.name}: the agent could not apply it: ${toError(error).message}`,
        { cause: error, retryable: true },
      );
    }
    const at = now();
    await markConfigApplied(deps.store, config.name, config.etag, at);
    applied.set(config.name, { ...config, appliedAt: at });
    emit({
      type: 'edge.config.applied',
      name: config.name,
      etag: config.etag,
      revision: config.revision,
      source,
    });
    return { name: config.name, outcome: 'applied', etag: config.etag };
  };

  /** The cached document `name` checked again, or undefined (a bad one is reported). */
  const checkedCache = async (name: ConfigDocumentName): Promise<VerifiedConfig | undefined> => {
    const cached = await readCachedConfig(deps.store, name);
    if (!cached) return undefined;
    try {
      const verified = await check(name, cached.document, {
        revision: cached.revision,
        fetchedAt: cached.fetchedAt,
        appliedAt: cached.appliedAt,
      });
      if (verified.etag !== cached.etag)
        throw new ConfigError('CONFIG_CORRUPTED', `${name}: the cached ETag does not match`);
      return verified;
    } catch (error) {
      if (error instanceof ConfigError && isRejectionCode(error.code)) {
        await reject(name, error, cached.etag, 'cache');
        return undefined;
      }
      throw error;
    }
  };

  const fetchDocument = async (name: ConfigDocumentName, etag: string | undefined) => {
    const controller = new AbortController();
    requests.add(controller);
    const timeout = timers.setTimeout(() => controller.abort(), requestTimeoutMs);
    try {
      const response = await deps.cloud.request({
        path: CONFIG_DOCUMENTS[name].path(deviceId),
        headers: etag !== undefined ? { 'if-none-match': etag } : {},
        signal: controller.signal,
      });
      const text = response.status === 304 ? '' : await response.text();
      return { status: response.status, text };
    } catch (error) {
      throw new ConfigError('CONFIG_FETCH_FAILED', `${name}: could not reach the cloud`, {
        cause: error,
        retryable: true,
      });
    } finally {
      timers.clearTimeout(timeout);
      requests.delete(controller);
    }
  };

  const pollOne = async (name: ConfigDocumentName, force: boolean): Promise<ConfigPollResult> => {
    const held = await checkedCache(name);
    if (held && held.appliedAt === null) await apply(held, 'cache'); // stored, never applied
    const response = await fetchDocument(name, force ? undefined : held?.etag);
    if (response.status === 304 && held) {
      emit({ type: 'edge.config.unchanged', name, etag: held.etag });
      return { name, outcome: 'unchanged', etag: held.etag };
    }
    if (response.status !== 200)
      throw new ConfigError(
        'CONFIG_FETCH_FAILED',
        `${name}: the cloud answered ${response.status}`,
        { retryable: response.status >= 500 || response.status === 429 || response.status === 304 },
      );
    let document: unknown;
    try {
      document = JSON.parse(response.text) as unknown;
    } catch (error) {
      return reject(
        name,
        new ConfigError('CONFIG_MALFORMED', `${name}: the body is not JSON`, { cause: error }),
        null,
        'cloud',
      );
    }
    const offered =
      document !== null && typeof document === 'object' && !Array.isArray(document)
        ? documentEtag(document as Record<string, unknown>)
        : null;
    let verified: VerifiedConfig;
    try {
      verified = await check(name, document, { revision: 0, fetchedAt: now(), appliedAt: null });
    } catch (error) {
      if (error instanceof ConfigError && isRejectionCode(error.code))
        return reject(name, error, offered, 'cloud');
      throw error;
    }
    if (held && held.etag === verified.etag) {
      emit({ type: 'edge.config.unchanged', name, etag: held.etag });
      return { name, outcome: 'unchanged', etag: held.etag };
    }
    const revision = await saveCachedConfig(
      deps.store,
      { name, etag: verified.etag, document: verified.document },
      verified.fetchedAt,
    );
    return apply({ ...verified, revision }, 'cloud');
  };

  const round = async (force: boolean): Promise<ConfigPollResult[]> => {
    const results: ConfigPollResult[] = [];
    for (const name of names) {
      let result: ConfigPollResult;
      try {
        result = await pollOne(name, force);
      } catch (error) {
        const info = errorInfo(error);
        emit({ type: 'edge.config.failed', name, ...info });
        result = { name, outcome: 'failed', etag: applied.get(name)?.etag ?? null, error: info };
      }
      const current = applied.get(name);
      documents[name] = {
        etag: current?.etag ?? null,
        revision: current?.revision ?? null,
        appliedAt: current?.appliedAt ?? null,
        lastOutcome: result.outcome,
        lastError: result.error ?? null,
      };
      results.push(result);
    }
    lastPollAt = now();
    return results;
  };

  const polls = createBackgroundLoop({
    intervalMs,
    firstDelayMs: 0,
    backoff: retry,
    random,
    timers,
    failed: (results) => results.some((r) => r.outcome === 'failed'),
    onSchedule: (delayMs) => (nextPollAt = new Date(now().getTime() + delayMs)),
    // told once the next round is planned: a listener reading the status sees when it is due
    onResult: (results) => emit({ type: 'edge.config.polled', results }),
    pass: () => {
      const run = loading.then(() => {
        const force = forceNext;
        forceNext = false;
        return round(force);
      });
      polled = run.catch(() => undefined);
      return run;
    },
    onError: () => undefined, // a round reports its failures in its results
  });

  const loadCache = async () => {
    const stored = await readSyncState(deps.store, SYNC_STATE_KEYS.configRejection);
    if (stored) lastRejection = stored.value as ConfigRejection;
    for (const name of names) {
      try {
        const held = await checkedCache(name);
        if (!held) continue;
        if (deps.applyCachedOnStart ?? true) await apply(held, 'cache');
        else applied.set(name, held);
      } catch (error) {
        emit({ type: 'edge.config.failed', name, ...errorInfo(error) });
      }
    }
  };

  return {
    async start() {
      if (running) return;
      running = true;
      const load = polled.then(loadCache);
      loading = load.catch(() => undefined);
      await load;
      if (running) polls.start();
    },
    async stop() {
      running = false;
      const stopped = polls.stop();
      nextPollAt = null;
      for (const controller of requests) controller.abort();
      await stopped;
      await loading;
    },
    pollNow(options = {}) {
      if (options.force === true) forceNext = true;
      return polls.runNext();
    },
    current: (name) => applied.get(name),
    status: () => ({
      running,
      intervalMs: intervalMs(),
      lastPollAt,
      nextPollAt,
      documents: { ...documents },
      lastRejection,
    }),
  };
}
