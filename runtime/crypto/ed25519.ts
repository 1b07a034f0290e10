/**
 * Checking an Ed25519 signature of the cloud key over a text. Every signed thing the cloud
 * hands a device — configuration documents, workflow definitions, commands — is signed the
 * same way: Ed25519 (RFC 8032), base64, over the UTF-8 bytes of a canonical JSON (RFC 8785)
 * text. node:crypto's `verify` recomputes nothing secret and compares in constant time, so
 * a signature is never compared as a string.
 */
import { createPublicKey, verify } from 'node:crypto';

/** Whether `signature` (base64) is the cloud key's over `text`; false for any malformed input. */
export function verifyEd25519(text: string, signature: unknown, publicKeyPem: string): boolean {
  if (typeof signature !== 'string' || signature === '') return false;
  try {
    return verify(
      null,
      Buffer.from(text, 'utf8'),
      createPublicKey(publicKeyPem),
      Buffer.from(signature, 'base64'),
    );
  } catch {
    return false;
  }
}
