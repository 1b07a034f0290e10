/**
 * Cryptography shared by the cloud and the edge: the signed-document format of device
 * configuration and fraud rules (checksum, Ed25519 signature, ETag), device request
 * signatures and the device socket's proof.
 */
export {
  contentChecksum,
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
  signSocketProof,
  socketProofString,
  SOCKET_PROOF_VERSION,
  verifySocketProof,
} from './socketProof.js';
