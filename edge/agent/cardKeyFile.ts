/**
 * The card key file: the 32-byte AES-256-GCM key that encrypts the card payload of SAF
 * records (edge/saf/cardPayload.ts), as 64 hex digits or base64 of 32 bytes. In production it
 * is provisioned with the terminal (the acquirer's side holds the same key and is the only
 * one that can read the payloads). When the file is missing the agent creates one with a
 * random key and mode 0600 — enough to run and test the agent, but payloads encrypted under a
 * key nobody else has cannot be settled, so the caller is told (`created`).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { SaffronError } from '../../runtime/index.js';

/** The key and whether the file was created now. */
export interface CardKey {
  key: Buffer;
  created: boolean;
}

const decode = (text: string): Buffer | undefined => {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return bytes.length === 32 ? bytes : undefined;
  }
  return undefined;
};

/** Read the card key in `file`, creating the file with a random key (mode 0600) when missing. */
export function loadCardKey(file: string): CardKey {
  let created = false;
  try {
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    created = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new SaffronError('CARD_KEY_UNAVAILABLE', `cannot create the card key file ${file}`, {
        cause: error,
      });
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new SaffronError('CARD_KEY_UNAVAILABLE', `cannot read the card key file ${file}`, {
      cause: error,
    });
  }
  const key = decode(text);
  if (!key)
    throw new SaffronError(
      'CARD_KEY_INVALID',
      `the card key file ${file} must hold a 32-byte key as 64 hex digits or base64`,
    );
  return { key, created };
}
