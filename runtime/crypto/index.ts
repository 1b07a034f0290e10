/**
 * Cryptography shared by the cloud and the edge: the signed-document format of device
 * configuration and fraud rules (checksum, Ed25519 signature, ETag), device request
 * signatures and the device socket's proof, and the signatures of the workflow definitions
 * and commands the cloud hands a device.
 */
export {
  contentChecksum,
  DEVICE_CONFIG_NAME,
  documentEtag,
  SIGNED_DOCUMENT_TYPES,
  signedText,
  verifySignedDocument,
  type DocumentVerification,
  type SignedDocumentType,
} from './signedDocument.js';
export {
  deviceAuthHeaders,
  signingString,
  signRequest,
  verifyRequestSignature,
  deviceUpgradeHeaders,
  type SignedRequest,
} from './deviceRequest.js';
export {
  newSocketChallenge,
  signSocketProof,
  socketProofString,
  SOCKET_PROOF_VERSION,
  verifySocketProof,
} from './socketProof.js';
export { verifyEd25519 } from './ed25519.js';
export {
  DEFINITION_SIGNATURE_FIELD,
  definitionSignedText,
  SIGNED_DEFINITION_TYPE,
  verifyDefinitionSignature,
  type SignableDefinition,
} from './signedDefinition.js';
export {
  commandSignedText,
  SIGNED_COMMAND_TYPE,
  verifyCommandSignature,
  type SignableCommand,
} from './signedCommand.js';
