/**
 * Signed workflow definitions. A definition the cloud hands a device — in an
 * `UPDATE_WORKFLOW` / `update_workflow` payload or in the `workflows` member of a
 * configuration layer — is new code paths for a payment terminal, so the cloud signs it
 * when it accepts it (at the command's creation, at the layer's publication), and the device
 * refuses one whose signature does not verify against the cloud key.
 *
 * The signature (`definition_signature`, beside `definition_yaml`) is Ed25519, base64, over
 * the canonical JSON of `{type: 'saffron.workflow-definition.v1', workflow_type,
 * definition_yaml}`: the exact YAML text the device loads and the type it is filed under.
 * It names no device: one signed definition serves a whole fleet (a broadcast, a fleet
 * layer). Because it is made when the cloud accepts the definition, not when it is sent, a
 * definition written into the database by any other way carries no valid signature.
 */
import { canonicalJson } from '../definition/hash.js';
import { verifyEd25519 } from './ed25519.js';

/** The `type` member of the signed text. */
export const SIGNED_DEFINITION_TYPE = 'saffron.workflow-definition.v1';

/** The member of a payload or a configuration entry that carries the signature. */
export const DEFINITION_SIGNATURE_FIELD = 'definition_signature';

/** What a definition signature covers. */
export interface SignableDefinition {
  workflow_type: string;
  definition_yaml: string;
}

/** The exact text a definition signature covers. */
export function definitionSignedText(definition: SignableDefinition): string {
  return canonicalJson({
    type: SIGNED_DEFINITION_TYPE,
    workflow_type: definition.workflow_type,
    definition_yaml: definition.definition_yaml,
  });
}

/** Whether `signature` is the cloud key's over `definition`. */
export function verifyDefinitionSignature(
  definition: SignableDefinition,
  signature: unknown,
  publicKeyPem: string,
): boolean {
  return verifyEd25519(definitionSignedText(definition), signature, publicKeyPem);
}
