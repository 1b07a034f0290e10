/** What every route module gets: the server, the stores, the engine and shared services. */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Runtime } from '../actors/index.js';
import type { ChannelListener, DestinationPolicy, CloudStore } from '../runtime/index.js';
import type { AuthDeps } from './auth/authenticate.js';
import type { ChangeBus } from './cache/changeBus.js';
import type { DocumentTags } from './config/documentTags.js';
import type { GateReads } from './governance/gateReads.js';
import type { Keyring } from './keys.js';
import type { RateLimiter } from './governance/rateLimiter.js';
import type { CommandEvents } from './link/commandEvents.js';
import type { OpenApiRegistry } from './openapi.js';
import type { QuietDevices } from './link/quietDevices.js';

/** Shared parts of one gateway instance. */
export interface GatewayContext {
  app: FastifyInstance;
  store: CloudStore;
  keys: Keyring;
  runtime: Runtime;
  /** Root of the step modules that registered definitions name. */
  stepsRoot: string;
  /** Where registered WASM binaries are kept. */
  wasmStorageDir: string;
  /** Where webhook deliveries may connect. */
  destinations: DestinationPolicy;
  openapi: OpenApiRegistry;
  metrics: Registry;
  auth: AuthDeps;
  now(): Date;
  /** Work to finish before the store closes (in-flight commits, sockets). */
  onClose(hook: () => Promise<void>): void;
  /** Command pushes and recorded acks, shared between route modules (link/commandEvents.ts). */
  commandEvents: CommandEvents;
  /**
   * Changes that caches hold (credentials, tokens, document ETags, the command gate's rules
   * and device attributes) and command pushes: announced with
   * a commit, heard by every gateway (cache/changeBus.ts).
   */
  changes: ChangeBus;
  /** ETags of the devices' configuration and fraud-rules documents (config/documentTags.ts). */
  documentTags: DocumentTags;
  /** The command gate's versions, policies and device attributes (governance/gateReads.ts). */
  gateReads: GateReads;
  /** Devices connecting with nothing to resume (link/quietDevices.ts). */
  quietDevices: QuietDevices;
  /** Rate-limit rules, enforced after authentication on every route (governance/rateLimiter.ts). */
  rateLimits: RateLimiter;
  /**
   * The gateway's one LISTEN connection, shared by its channels (command pushes, cache
   * changes, nonce announcements); PostgreSQL only — PGlite is one process.
   */
  listener?: ChannelListener;
}
