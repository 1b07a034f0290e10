/**
 * Webhooks: the `/api/v1/webhooks` routes (gateway/webhooks/routes.ts) and the dispatcher
 * that delivers what facts enqueue (gateway/webhooks/dispatcher.ts). One route module, so the
 * dispatcher starts with the gateway and stops with it.
 */
import type { GatewayContext } from '../context.js';
import {
  createWebhookDispatcher,
  type WebhookDispatcher,
  type WebhookDispatcherOptions,
} from './dispatcher.js';
import { registerWebhookRoutes } from './routes.js';
import type { RouteModule } from '../server.js';

/** Options of {@link webhookRoutes}. */
export interface WebhookOptions extends WebhookDispatcherOptions {
  /** Called with the dispatcher once it runs (embedders and tests observe or drive it). */
  onDispatcher?: (dispatcher: WebhookDispatcher) => void;
  /** Do not start the background loop (the embedder calls `tick()` itself). */
  manual?: boolean;
}

/** The webhook routes, with their dispatcher tuned by `options`. */
export function webhookRoutes(options: WebhookOptions = {}): RouteModule {
  return (ctx: GatewayContext) => {
    const dispatcher = createWebhookDispatcher(ctx, options);
    if (!options.manual) dispatcher.start();
    ctx.onClose(() => dispatcher.close());
    options.onDispatcher?.(dispatcher);
    registerWebhookRoutes(ctx);
  };
}
