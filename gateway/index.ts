/**
 * The cloud control plane (docs/architecture.md#security, #cloud-and-edge): an HTTP API under `/api/v1` and the device
 * WebSocket gateway, over a PostgreSQL or embedded PGlite store.
 */
export {
  createGateway,
  DEFAULT_TIMEOUTS,
  type Gateway,
  type GatewayOptions,
  type RouteModule,
  type ServerTimeouts,
} from './server.js';
export { ephemeralKeyring, loadKeyring, type Keyring } from './keys.js';
export { TOKENS_CHANGED } from './auth/tokenCache.js';
export {
  createApiToken,
  listApiTokens,
  revokeApiToken,
  type ApiTokenSummary,
  type CreatedToken,
} from './auth/tokens.js';
export {
  deviceAuthHeaders,
  deviceUpgradeHeaders,
  signRequest,
  signSocketProof,
} from '../runtime/index.js';
export { USER_ROLES, type Principal, type UserRole } from './auth/principal.js';
export { Problem } from './problem.js';
export { route, type Access, type RouteSpec } from './route.js';
export type { GatewayContext } from './context.js';
export type { RateLimitOptions } from './governance/rateLimiter.js';
export { workflowWebhookHook } from './webhooks/workflowEvents.js';
export {
  signWebhookPayload,
  verifyWebhookSignature,
  WEBHOOK_HEADERS,
  type WebhookSignatureCheck,
} from './webhooks/signature.js';
