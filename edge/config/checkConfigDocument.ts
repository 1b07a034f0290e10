/**
 * What a device checks before it loads a configuration document (spec: Authentication 4;
 * docs/architecture.md#security), in this order: shape, checksum (corruption), Ed25519 signature against the
 * pinned cloud key (tampering), then that it is the document asked for and issued for this
 * device, then its schema. The order matters: a checksum failure is reported as corruption
 * even when the signature would fail too, and nothing unsigned is ever parsed for meaning —
 * the schema only ever sees bytes the cloud vouched for.
 *
 * The schema is the device's side of the contract (gateway/config/documents.ts and the
 * policy rule schema of gateway/routes/policies.ts), loose where the cloud may add fields
 * later: unknown members are allowed, known ones must have the right shape. The device
 * configuration content may carry `config_poll_interval_seconds` (integer, 10 to 86 400):
 * how often the device polls its configuration.
 *
 * A device configuration may carry workflow definitions (`config.workflows`, keyed by type).
 * The document's signature proves the cloud sent the merge, but the merge is built and signed
 * on request from whatever layers the database holds; each definition therefore carries its
 * own signature, made when its layer was published through the cloud's API
 * (runtime/crypto/signedDefinition.ts), and a document with one that does not verify is
 * refused whole (DEFINITION_SIGNATURE_INVALID).
 */
import { z } from 'zod';
import {
  DEFINITION_SIGNATURE_FIELD,
  verifyDefinitionSignature,
  verifySignedDocument,
} from '../../runtime/index.js';
import { CONFIG_DOCUMENTS, type ConfigDocumentName } from './documents.js';
import { ConfigError } from './errors.js';

/** Rule operators and actions a device evaluates (the cloud's policy rule schema). */
const RULE_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in'] as const;
const RULE_ACTIONS = ['allow', 'review', 'decline'] as const;

/** Bounds of `config_poll_interval_seconds`. */
export const CONFIG_POLL_INTERVAL_BOUNDS = { minSeconds: 10, maxSeconds: 86_400 } as const;

const deviceConfigSchema = z.looseObject({
  type: z.literal('saffron.device-config.v1'),
  device_id: z.string().min(1),
  version: z.string(),
  layers: z.array(
    z.looseObject({ scope: z.string(), scope_key: z.string(), version: z.number().int() }),
  ),
  assignments: z.array(
    z.looseObject({ assignment_type: z.string(), target_id: z.string(), parameters: z.unknown() }),
  ),
  config: z.looseObject({
    config_poll_interval_seconds: z
      .number()
      .int()
      .min(CONFIG_POLL_INTERVAL_BOUNDS.minSeconds)
      .max(CONFIG_POLL_INTERVAL_BOUNDS.maxSeconds)
      .optional(),
  }),
});

const ruleSchema = z.looseObject({
  id: z.string().optional(),
  field: z.string().min(1),
  op: z.enum(RULE_OPS),
  value: z.unknown(),
  action: z.enum(RULE_ACTIONS),
});

const fraudRulesSchema = z.looseObject({
  type: z.literal('saffron.fraud-rules.v1'),
  device_id: z.string().min(1),
  policies: z.array(z.looseObject({ name: z.string(), version: z.number().int() })),
  rules: z.array(ruleSchema),
});

const SCHEMAS: Record<ConfigDocumentName, z.ZodType> = {
  device: deviceConfigSchema,
  fraud_rules: fraudRulesSchema,
};

const pathText = (path: readonly PropertyKey[]) =>
  path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}.${String(key)}`),
    '$',
  );

/**
 * Check `document` as the `name` document of device `deviceId`, signed with
 * `publicKeyPem`. Returns it typed as an object; throws a {@link ConfigError} saying what
 * failed first.
 */
export function checkConfigDocument(
  name: ConfigDocumentName,
  document: unknown,
  publicKeyPem: string,
  deviceId: string,
): Record<string, unknown> {
  const verification = verifySignedDocument(document, publicKeyPem);
  if (!verification.ok)
    throw new ConfigError(verification.code, `${name}: ${verification.message}`);
  const doc = document as Record<string, unknown>;
  const expected = CONFIG_DOCUMENTS[name].type;
  if (doc.type !== expected)
    throw new ConfigError(
      'CONFIG_SCHEMA_INVALID',
      `${name}: expected a ${expected} document, got ${String(doc.type)}`,
      { details: { issues: [{ path: '$.type', message: `expected ${expected}` }] } },
    );
  if (doc.device_id !== deviceId)
    throw new ConfigError(
      'CONFIG_DEVICE_MISMATCH',
      `${name}: the document was issued for device ${JSON.stringify(doc.device_id)}, not ${deviceId}`,
    );
  const parsed = SCHEMAS[name].safeParse(doc);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: pathText(issue.path),
      message: issue.message,
    }));
    throw new ConfigError(
      'CONFIG_SCHEMA_INVALID',
      `${name}: ${issues
        .slice(0, 5)
        .map((i) => `${i.path}: ${i.message}`)
        .join('; ')}`,
      { details: { issues } },
    );
  }
  if (name === 'device') checkDefinitionSignatures(doc.config, publicKeyPem);
  return doc;
}

/** Throw DEFINITION_SIGNATURE_INVALID for the first definition of `config.workflows` the cloud did not sign. */
function checkDefinitionSignatures(config: unknown, publicKeyPem: string): void {
  const workflows = (config as { workflows?: unknown }).workflows;
  if (workflows === null || typeof workflows !== 'object' || Array.isArray(workflows)) return;
  for (const [type, entry] of Object.entries(workflows)) {
    if (entry === null || typeof entry !== 'object') continue; // the agent's schema check refuses it
    const { definition_yaml: yaml, [DEFINITION_SIGNATURE_FIELD]: signature } = entry as Record<
      string,
      unknown
    >;
    if (typeof yaml !== 'string') continue;
    if (
      !verifyDefinitionSignature(
        { workflow_type: type, definition_yaml: yaml },
        signature,
        publicKeyPem,
      )
    )
      throw new ConfigError(
        'DEFINITION_SIGNATURE_INVALID',
        `device: the definition of workflows.${type} is not signed by the cloud (or was altered)`,
      );
  }
}

/** The poll interval a device configuration asks for, in milliseconds, if it names one. */
export function configPollIntervalMs(content: unknown): number | undefined {
  if (content === null || typeof content !== 'object') return undefined;
  const seconds = (content as { config_poll_interval_seconds?: unknown })
    .config_poll_interval_seconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds * 1000 : undefined;
}
