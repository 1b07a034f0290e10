/**
 * The control-plane server: fastify with problem+json errors, size- and depth-limited JSON
 * bodies, authenticated routes declared with zod schemas, an OpenAPI 3.1 document, health
 * and readiness probes, Prometheus metrics, and a graceful close that stops accepting,
 * finishes in-flight requests and then the hooks routes registered (sockets, commits).
 */
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { createRuntime, type Runtime } from '../actors/index.js';
import type { Store } from '../runtime/index.js';
import { createNonceCache } from './auth/nonces.js';
import type { GatewayContext } from './context.js';
import { registerJsonBodies } from './jsonBody.js';
import type { Keyring } from './keys.js';
import { OpenApiRegistry } from './openapi.js';
import { Problem, problemBody, toProblem } from './problem.js';
import { registerCoreRoutes } from './routes/core.js';
import { ALL_ROUTES } from './routes/index.js';

/** A module of routes. */
export type RouteModule = (ctx: GatewayContext) => void | Promise<void>;

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  store: Store;
  keys: Keyring;
  /** The engine over `store`; by default one is created (and closed with the gateway). */
  runtime?: Runtime;
  /** Root of step modules for definitions registered through the API (default: cwd). */
  stepsRoot?: string;
  /** Route modules to register besides the core ones (default: all of them). */
  routes?: readonly RouteModule[];
  /** Largest request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Allowed device clock skew (default 300 s). */
  skewMs?: number;
  /** fastify/pino logger options (default: off). */
  logger?: FastifyServerOptions['logger'];
  now?: () => Date;
  version?: string;
}

/** A gateway instance. */
export interface Gateway {
  readonly app: FastifyInstance;
  readonly context: GatewayContext;
  /** Listen on `port` (0 = any) at `host`; returns the base URL. */
  listen(port: number, host?: string): Promise<string>;
  /** Stop accepting, finish in-flight work, run close hooks; idempotent. */
  close(): Promise<void>;
}

/** Build a gateway (routes registered, not listening yet). */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
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
  await app.register(websocket, { options: { maxPayload: 256 * 1024 } });

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
  const runtime =
    options.runtime ?? createRuntime({ store: options.store, stepsRoot, runTasks: true });
  const closeHooks: (() => Promise<void>)[] = [];
  const context: GatewayContext = {
    app,
    store: options.store,
    keys: options.keys,
    runtime,
    stepsRoot,
    openapi: new OpenApiRegistry(),
    metrics,
    now,
    auth: {
      store: options.store,
      keys: options.keys,
      nonces: createNonceCache(2 * (options.skewMs ?? 300_000)),
      now,
      skewMs: options.skewMs ?? 300_000,
    },
    onClose: (hook) => closeHooks.push(hook),
  };
  registerCoreRoutes(context, options.version ?? '0.0.0');
  for (const module of options.routes ?? ALL_ROUTES) await module(context);

  let closing: Promise<void> | undefined;
  return {
    app,
    context,
    async listen(port, host = '127.0.0.1') {
      const address = await app.listen({ port, host });
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
