/** Webhooks (cloud tier): registrations, the event outbox, and delivery with retry state. */
export {
  WEBHOOK_EVENT_KINDS,
  isWebhookEventKind,
  type ApprovalDecidedData,
  type ApprovalRequestedData,
  type CommandEventData,
  type ConfigEventData,
  type DeviceEventData,
  type SafBatchEventData,
  type WebhookEnvelope,
  type WebhookEvent,
  type WebhookEventData,
  type WebhookEventKind,
  type WorkflowEventData,
} from './webhookEvent.js';
export { emitWebhookEvent, emitWebhookEvents, hasWebhookSubscribers } from './emitWebhookEvents.js';
export type { WebhookRecord } from './registration.js';
export { insertWebhook, type NewWebhook } from './insertWebhook.js';
export { getWebhook } from './getWebhook.js';
export { listWebhooks, type WebhookPage } from './listWebhooks.js';
export { updateWebhook, type WebhookChanges } from './updateWebhook.js';
export { deleteWebhook } from './deleteWebhook.js';
export type { DeliveryRecord, WebhookAttempt } from './delivery.js';
export { listWebhookDeliveries, type DeliveryFilter } from './listWebhookDeliveries.js';
export { getWebhookDelivery } from './getWebhookDelivery.js';
export { countWebhookDeliveries, type DeliveryCounts } from './countWebhookDeliveries.js';
export { claimWebhookDeliveries, type ClaimedDelivery } from './claimWebhookDeliveries.js';
export { recordWebhookAttempt, type AttemptOutcome } from './recordWebhookAttempt.js';
export { redeliverWebhookDelivery, type RedeliverOutcome } from './redeliverWebhookDelivery.js';
