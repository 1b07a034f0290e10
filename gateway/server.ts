/**
 * The control-plane server: fastify with problem+json errors, size- and depth-limited JSON
 * bodies, authenticated routes declared with zod schemas, an OpenAPI 3.1 document, health
 * and readiness probes, Prometheus metrics, and a graceful close that stops accepting,
 * finishes in-flight requests and then the hooks routes registered (sockets, commits).
 *
 * A request is answered before its body is read whenever it can be refused from its headers
 * (no route, no credentials: route.ts). Such an answer closes the connection: Node would
 * otherwise read the rest of the body to keep the connection alive, which a client can make
 * last as long as it likes. Timeouts bound what a slow client can hold: the whole request,
 * its headers, the silence on a socket, an idle kept-alive connection (see
 * {@link ServerTimeouts}); a device's WebSocket leaves them once upgraded.
 */
import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { createRuntime, type Runtime } from '../actors/index.js';
import {
  createChannelListener,
  DestinationPolicy,
  importOptional,
  storeWasmSource,
  wasmStorageDir,
  type DestinationPolicyOptions,
  type CloudStore,
} from '../runtime/index.js';
import { createCredentialCache } from './auth/credentialCache.js';
import { warmCredentials } from './auth/warmCredentials.js';
import { createQuietDevices } from './link/quietDevices.js';
import { createTokenCache } from './auth/tokenCache.js';
import { createNonceCache } from './auth/nonces.js';
import { createChangeBus } from './cache/changeBus.js';
import { CACHE_DEFAULTS, type CacheBounds } from './cache/invalidatingCache.js';
import { createDocumentTags } from './config/documentTags.js';
import { createGateReads } from './governance/gateReads.js';
import { createRateLimiter, type RateLimitOptions } from './governance/rateLimiter.js';
import type { GatewayContext } from './context.js';
import { declaresBody, registerJsonBodies } from './jsonBody.js';
import { createCommandEvents } from './link/commandEvents.js';
import type { Keyring } from './keys.js';
import { OpenApiRegistry } from './openapi.js';
import { Problem, problemBody, toProblem } from './problem.js';
import { MAX_PATH_PARAMETER_LENGTH } from './route.js';
import { registerDashboard } from './dashboard/registerDashboard.js';
import { registerCoreRoutes } from './routes/core.js';
import { ALL_ROUTES } from './routes/index.js';
import { workflowWebhookHook } from './webhooks/workflowEvents.js';

/** How often each gateway deletes expired shared nonces. */
const NONCE_PURGE_INTERVAL_MS = 60_000;
/**
 * Connections the kernel holds for the gateway before it accepts them (Node's default is
 * 511; Linux caps it at `net.core.somaxconn`). When a fleet reconnects at once, a full queue
 * drops the devices' SYNs and each waits out TCP's retransmission (1 s, then 3 s, …) or its
 * own connect timeout; held in the queue, they are taken as fast as the gateway can
 * authenticate (docs/device-plane.md, "Reconnect storms").
 */
const LISTEN_BACKLOG = 4096;

/**
 * How long a client may take (milliseconds). The defaults leave a 16 MiB upload two minutes
 * over a slow link, and close a connection that sends nothing for a minute.
 */
export interface ServerTimeouts {
  /** Whole request, headers and body, from its first byte (default 120 s; 408 after). */
  requestMs?: number;
  /** The headers alone (default 30 s); at most `requestMs`. */
  headersMs?: number;
  /** A socket on which nothing is sent or received (default 60 s); it is then closed. */
  idleMs?: number;
  /** A kept-alive connection between two requests (default 72 s, above common proxies' 60 s). */
  keepAliveMs?: number;
}

/** The timeouts a gateway uses when its options leave them out. */
export const DEFAULT_TIMEOUTS: Readonly<Required<ServerTimeouts>> = {
  requestMs: 120_000,
  headersMs: 30_000,
  idleMs: 60_000,
  keepAliveMs: 72_000,
};

/**
 * Node checks the request and header timeouts of open connections on an interval (30 s by
 * default), so a timeout is enforced up to that late; a quarter of the shorter one keeps the
 * overshoot proportionate.
 */
const checkingInterval = (timeouts: Required<ServerTimeouts>) =>
  Math.max(25, Math.min(30_000, Math.floor(Math.min(timeouts.headersMs, timeouts.requestMs) / 4)));

/** The timeouts of `given`, defaults filled in and checked. */
function serverTimeouts(given: ServerTimeouts = {}): Required<ServerTimeouts> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...stripUndefined(given) };
  for (const [name, value] of Object.entries(timeouts))
    if (!Number.isInteger(value) || value <= 0)
      throw new RangeError(`timeouts.${name} must be a positive integer of milliseconds`);
  if (timeouts.headersMs > timeouts.requestMs)
    throw new RangeError('timeouts.headersMs must not exceed timeouts.requestMs');
  return timeouts;
}

const stripUndefined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

/** A module of routes. */
export type RouteModule = (ctx: GatewayContext) => void | Promise<void>;

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  store: CloudStore;
  keys: Keyring;
  /**
   * The engine over `store`; by default one is created (and closed with the gateway), with
   * the workflow webhook hook installed — give yours `onSettled: workflowWebhookHook()`.
   */
  runtime?: Runtime;
  /** Root of step modules for definitions registered through the API (default: cwd). */
  stepsRoot?: string;
  /**
   * Where registered WASM binaries are kept (default: `WASM_STORAGE_DIR`, else
   * `./wasm_storage`, from the working directory).
   */
  wasmStorageDir?: string;
  /**
   * Where webhook deliveries (and the HTTP steps of the engine the gateway creates) may
   * connect: public addresses only unless `allowedPrivateNetworks` opens some.
   */
  outbound?: DestinationPolicyOptions;
  /** Route modules to register besides the core ones (default: all of them). */
  routes?: readonly RouteModule[];
  /** Largest request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** How long a client may take to send a request, and to keep a connection (see the type). */
  timeouts?: ServerTimeouts;
  /** Allowed device clock skew (default 300 s). */
  skewMs?: number;
  /**
   * Longest wait of a device read's nonce before it is written to the shared table and
   * announced to the other gateways (default 100 ms): the window in which a read replayed
   * to another gateway can still be answered.
   */
  nonceFlushMs?: number;
  /**
   * Reads are answered from memory only while the gateway hears back, within this long, an
   * announcement it sent (default 2000 ms); else they are checked strictly. With the flush
   * interval it bounds the cross-gateway replay window of a read.
   */
  nonceLivenessMs?: number;
  /** Rate limiting: rule refresh, budget reservation size (governance/rateLimiter.ts). */
  rateLimits?: RateLimitOptions;
  /** Bounds of the in-memory device credentials and of the document ETags, each. */
  caches?: CacheBounds;
  /**
   * Most devices whose credentials are read into memory as the gateway starts, the most
   * recently seen first, so that a fleet reconnecting at once runs no credential read per
   * handshake (auth/warmCredentials.ts; default and most: the caches' `maxEntries`; 0: none).
   */
  warmDevices?: number;
  /** fastify/pino logger options (default: off). */
  logger?: FastifyServerOptions['logger'];
  now?: () => Date;
  version?: string;
}

/** A gateway instance. */
export interface Gateway {
  readonly app: FastifyInstance;
  readonly context: GatewayContext;
  /**
   * Settles once the credentials read ahead at the start are in memory (`warmDevices`): how
   * many devices' were read; 0 when none were, failures logged.
   */
  readonly warmed: Promise<number>;
  /**
   * Listen on `port` (0 = any) at `host`, with a backlog of 4,096 connections for
   * reconnect storms; returns the base URL.
   */
  listen(port: number, host?: string): Promise<string>;
  /** Stop accepting, finish in-flight work, run close hooks; idempotent. */
  close(): Promise<void>;
}

/** Build a gateway (routes registered, not listening yet). */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  // optional dependencies (runtime/optionalDependency.ts): loaded when a server is built
  const { default: Fastify } = await importOptional(
    ['fastify'],
    'the control-plane server',
    () => import('fastify'),
  );
  const timeouts = serverTimeouts(options.timeouts);
  const maxEntries = options.caches?.maxEntries ?? CACHE_DEFAULTS.maxEntries;
  const warmDevices = options.warmDevices ?? maxEntries;
  if (!Number.isSafeInteger(warmDevices) || warmDevices < 0)
    throw new RangeError(
      `warmDevices must be a whole number of devices, 0 or more: ${warmDevices}`,
    );
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout: timeouts.headersMs,
      connectionsCheckingInterval: checkingInterval(timeouts),
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    // errors the router raises before any route runs (bad percent-encoding, an over-long path
    // parameter) answer as problem+json like every other error, not fastify's own JSON
    frameworkErrors: (error, _request, reply) => {
      const status = error.statusCode === 414 ? 414 : error.statusCode === 400 ? 400 : 500;
      const [code, detail] =
        status === 414
          ? [
              'PATH_PARAMETER_TOO_LONG',
              `a path parameter is longer than ${MAX_PATH_PARAMETER_LENGTH} characters`,
            ]
          : status === 400
            ? ['BAD_URL', 'the URL is not valid percent-encoded UTF-8']
            : ['INTERNAL', 'the server could not complete the request'];
      const answer = reply as unknown as FastifyReply; // the option's generics fit no route
      void answer
        .code(status)
        .type('application/problem+json')
        .send(problemBody(status, code, detail));
    },
    // redact credentials from request logs
    ...(options.logger
      ? {
          logger: {
            ...(typeof options.logger === 'object' ? options.logger : {}),
            redact: ['req.headers.authorization'],
          },
        }
      : {}),
  });
  registerJsonBodies(app);
  // no route: answered before the body is read (the not-found handler would read it first)
  app.addHook('onRequest', (request, _reply, done) => {
    if (!request.is404) return done();
    const path = request.url.split('?')[0] ?? '';
    done(new Problem(404, 'NOT_FOUND', `no route ${request.method} ${path}`));
  });
  // an answer sent before the body was read closes the connection, or Node would read on
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete && declaresBody(request.headers)) reply.header('connection', 'close');
    done(null, payload);
  });

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const requests = new Counter({
    name: 'saffron_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [metrics],
  });
  const latency = new Histogram({
    name: 'saffron_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [metrics],
  });
  app.addHook('onResponse', async (request, reply) => {
    const routeUrl = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route: routeUrl, status: reply.statusCode });
    latency.observe({ method: request.method, route: routeUrl }, reply.elapsedTime / 1000);
  });

  app.setErrorHandler(async (error, request, reply) => {
    const problem = toProblem(error);
    if (!problem) {
      request.log.error({ err: error }, 'request failed');
      return reply
        .code(500)
        .type('application/problem+json')
        .send(problemBody(500, 'INTERNAL', 'the server could not complete the request'));
    }
    for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
    return reply
      .code(problem.status)
      .type('application/problem+json')
      .send(problemBody(problem.status, problem.code, problem.message, problem.extensions));
  });
  app.setNotFoundHandler(async (request, reply) =>
    reply
      .code(404)
      .type('application/problem+json')
      .send(
        problemBody(404, 'NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`),
      ),
  );

  const now = options.now ?? (() => new Date());
  const ownRuntime = options.runtime === undefined;
  const stepsRoot = options.stepsRoot ?? process.cwd();
  const storageDir = options.wasmStorageDir ?? wasmStorageDir(process.env, process.cwd());
  const runtime =
    options.runtime ??
    createRuntime({
      store: options.store,
      stepsRoot,
      runTasks: true,
      // WASM steps read the binaries the registry routes store, wherever that is
      wasmSource: storeWasmSource(options.store, { storageDir }),
      ...(options.outbound ? { outbound: options.outbound } : {}),
      // workflow.completed / workflow.failed webhook events commit with the terminal status
      onSettled: workflowWebhookHook(now),
    });
  const closeHooks: (() => Promise<void>)[] = [];
  const driver = options.store.driver;
  // one LISTEN connection for every channel: command pushes, cache changes, nonces
  const listener =
    driver.dialect === 'postgres'
      ? createChannelListener(driver.pool, {
          onError: (error) => app.log.warn({ err: error }, 'notification connection lost'),
        })
      : undefined;
  // closed last (hooks run in reverse), once its channels have stopped
  if (listener) closeHooks.push(() => listener.close());
  const lateReplays = new Counter({
    name: 'saffron_device_reads_replayed_across_gateways_total',
    help: 'device reads this gateway answered from memory whose nonce another gateway had recorded first (a replay inside the write-behind window, or a race)',
    registers: [metrics],
  });
  // a timestamp may be up to the skew early or late: a nonce must outlive both
  const nonces = createNonceCache(options.store, {
    ...(listener ? { listener } : {}),
    windowMs: 2 * (options.skewMs ?? 300_000),
    ...(options.nonceFlushMs !== undefined ? { flushMs: options.nonceFlushMs } : {}),
    ...(options.nonceLivenessMs !== undefined ? { livenessMs: options.nonceLivenessMs } : {}),
    now: () => now().getTime(),
    onError: (error) => app.log.warn({ err: error }, 'writing device nonces failed'),
    onLateReplay: (nonce) => {
      lateReplays.inc();
      app.log.warn(
        { device_id: nonce.deviceId },
        'a device read was replayed to another gateway within the nonce write-behind window',
      );
    },
  });
  const changes = createChangeBus(options.store, listener, (error) =>
    app.log.warn({ err: error }, 'a cache failed to apply a change'),
  );
  // caches serve only while this gateway hears changes in time: LISTEN holds and, across
  // gateways, its own nonce announcements come back within the liveness interval (a
  // connection that lags or died silently shows there before any change is missed for long)
  const trusted = () => changes.trusted() && (listener === undefined || nonces.readsFromMemory());
  const quietDevices = createQuietDevices(trusted, () => now().getTime());
  const credentials = createCredentialCache(
    options.store,
    options.keys,
    trusted,
    options.caches,
    quietDevices,
  );
  const tokens = createTokenCache(options.store, trusted, options.caches);
  const documentTags = createDocumentTags(trusted, options.caches);
  const gateReads = createGateReads(options.store, trusted, options.caches);
  changes.onChange((change) => {
    credentials.apply(change);
    tokens.apply(change);
    documentTags.apply(change);
    gateReads.apply(change);
  });
  await changes.start();
  closeHooks.push(() => changes.close());
  const context: GatewayContext = {
    app,
    store: options.store,
    keys: options.keys,
    runtime,
    stepsRoot,
    wasmStorageDir: storageDir,
    destinations: new DestinationPolicy(options.outbound),
    openapi: new OpenApiRegistry(),
    metrics,
    now,
    auth: {
      credentials,
      tokens,
      nonces,
      now,
      skewMs: options.skewMs ?? 300_000,
    },
    onClose: (hook) => closeHooks.push(hook),
    changes,
    documentTags,
    gateReads,
    quietDevices,
    commandEvents: createCommandEvents((error) =>
      app.log.error({ err: error }, 'a command event listener failed'),
    ),
    ...(listener ? { listener } : {}),
    rateLimits: createRateLimiter(
      {
        store: options.store,
        now,
        metrics,
        onError: (error) => app.log.warn({ err: error }, 'purging rate-limit counters failed'),
      },
      options.rateLimits,
    ),
  };
  closeHooks.push(() => Promise.resolve(context.rateLimits.close()));
  const purgeNonces = setInterval(() => {
    context.auth.nonces
      .purge(now().getTime())
      .catch((error: unknown) => app.log.warn({ err: error }, 'purging expired nonces failed'));
  }, NONCE_PURGE_INTERVAL_MS).unref();
  closeHooks.push(() => Promise.resolve(clearInterval(purgeNonces)));
  await context.auth.nonces.start();
  closeHooks.push(() => context.auth.nonces.close());
  registerCoreRoutes(context, options.version ?? '0.0.0');
  const routes = options.routes ?? ALL_ROUTES;
  for (const module of routes) await module(context);
  // the server's root opens the dashboard (which asks for a token itself)
  if (routes.includes(registerDashboard))
    app.get('/', async (_request, reply) => reply.redirect('/dashboard/', 302));

  const warming = warmCredentials({
    store: options.store,
    credentials,
    trusted,
    limit: Math.min(warmDevices, maxEntries),
    log: app.log,
  });
  // runs first (hooks run in reverse): no read outlives the gateway
  closeHooks.push(async () => {
    warming.stop();
    await warming.done;
  });

  let closing: Promise<void> | undefined;
  return {
    app,
    context,
    warmed: warming.done,
    async listen(port, host = '127.0.0.1') {
      const address = await app.listen({ port, host, backlog: LISTEN_BACKLOG });
      return address;
    },
    close() {
      closing ??= (async () => {
        await app.close();
        for (const hook of closeHooks.reverse()) await hook();
        if (ownRuntime) await runtime.close();
      })();
      return closing;
    },
  };
}

export { Problem };
