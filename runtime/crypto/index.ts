/**
 * Cryptography shared by the cloud and the edge: the signed-document format of device
 * configuration and fraud rules (checksum, Ed25519 signature, ETag).
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
  type SignedRequest,
} from './deviceRequest.js';
