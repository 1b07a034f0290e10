/**
 * Signing the workflow definitions the cloud accepts (format: runtime/crypto/
 * signedDefinition.ts). Every path that will hand a device a definition signs it once, when
 * the cloud accepts it, after its payload passed validation and before it is stored or held
 * for approval: a single command, a batch, a broadcast (and what a schedule or a template
 * creates through them), and a configuration layer carrying `workflows`. A signature sent by
 * the caller is never kept: the cloud signs what it accepted, or nothing.
 */
import { DEFINITION_SIGNATURE_FIELD, definitionSignedText } from '../../runtime/index.js';
import type { Keyring } from '../keys.js';

/** What signs a definition: the gateway's keyring. */
export type DefinitionSigner = Pick<Keyring, 'sign'>;

/** Command types whose payload carries a definition. */
const DEFINITION_COMMANDS: ReadonlySet<string> = new Set(['UPDATE_WORKFLOW', 'update_workflow']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `entry` with the cloud's signature of its definition (any given one removed). */
function signed(
  keys: DefinitionSigner,
  workflowType: unknown,
  entry: Record<string, unknown>,
): Record<string, unknown> {
  const { [DEFINITION_SIGNATURE_FIELD]: _given, ...rest } = entry;
  if (typeof workflowType !== 'string' || typeof rest.definition_yaml !== 'string') return rest;
  const text = definitionSignedText({
    workflow_type: workflowType,
    definition_yaml: rest.definition_yaml,
  });
  return { ...rest, [DEFINITION_SIGNATURE_FIELD]: keys.sign(text) };
}

/** The payload of a `commandType` command, its definition signed when it carries one. */
export function signCommandDefinition<P extends Record<string, unknown>>(
  keys: DefinitionSigner,
  commandType: string,
  payload: P,
): P {
  if (!DEFINITION_COMMANDS.has(commandType)) return payload;
  return signed(keys, payload.workflow_type, payload) as P;
}

/**
 * A configuration layer's content with every definition of its `workflows` member
 * (`{type: {definition_yaml, …}}`) signed; a layer without one is returned as it is.
 */
export function signConfigDefinitions(
  keys: DefinitionSigner,
  config: Record<string, unknown>,
): Record<string, unknown> {
  const workflows = config.workflows;
  if (!isObject(workflows)) return config;
  const out: Record<string, unknown> = {};
  for (const [type, entry] of Object.entries(workflows))
    out[type] = isObject(entry) ? signed(keys, type, entry) : entry;
  return { ...config, workflows: out };
}
