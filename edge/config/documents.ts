/**
 * The configuration documents a device pulls (format: runtime/crypto/signedDocument.ts),
 * where it pulls them from, and the names it caches them under in `device_config_cache`.
 * The device configuration is cached as `device` (the cloud's `device_configs.config_name`
 * of device layers), the fraud rules as `fraud_rules`.
 */
import { DEVICE_CONFIG_NAME, type SignedDocumentType } from '../../runtime/index.js';

/** The documents, by the name they are cached under. */
export const CONFIG_DOCUMENTS = {
  [DEVICE_CONFIG_NAME]: {
    type: 'saffron.device-config.v1',
    member: 'config',
    path: (deviceId: string) => `/api/v1/devices/${encodeURIComponent(deviceId)}/config`,
  },
  fraud_rules: {
    type: 'saffron.fraud-rules.v1',
    member: 'rules',
    path: () => '/api/v1/config/fraud-rules',
  },
} as const satisfies Record<
  string,
  { type: SignedDocumentType; member: string; path: (deviceId: string) => string }
>;

/** A document's name: `device` or `fraud_rules`. */
export type ConfigDocumentName = keyof typeof CONFIG_DOCUMENTS;

/** Every document name, device configuration first. */
export const CONFIG_DOCUMENT_NAMES = Object.keys(CONFIG_DOCUMENTS) as ConfigDocumentName[];

/** A document that passed every check: checksum, signature, type, device and schema. */
export interface VerifiedConfig {
  name: ConfigDocumentName;
  /** Strong ETag of the document (what the device sends back in If-None-Match). */
  etag: string;
  /** The whole signed document, signature included. */
  document: Record<string, unknown>;
  /** The content member: the merged `config` object, or the `rules` list. */
  content: unknown;
  /** The cloud's version label (`f1.t0.d2` for device configuration), when it has one. */
  version: string | null;
  /** Local revision: how many documents of this name the device has accepted. */
  revision: number;
  fetchedAt: Date;
  /** When the agent's `onApplied` hook last succeeded for this ETag; null until then. */
  appliedAt: Date | null;
}
