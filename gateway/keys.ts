/**
 * The cloud's key material, generated on first start and kept in a directory readable only
 * by its owner (or given through the environment): an Ed25519 key pair that signs device
 * configuration, and a 32-byte master key that encrypts device secrets at rest
 * (AES-256-GCM). Nothing here is ever logged.
 */
import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The gateway's keys. */
export interface Keyring {
  /** Ed25519 signature (base64) over `data`. */
  sign(data: string): string;
  /** The public half, PEM (SPKI). */
  readonly publicKeyPem: string;
  /** Encrypt a secret for storage: `v1:` + base64(iv | tag | ciphertext). */
  seal(plaintext: string): string;
  /** Decrypt what {@link Keyring.seal} produced; throws on tampering. */
  open(sealed: string): string;
}

function keyringOf(privateKey: KeyObject, masterKey: Buffer): Keyring {
  if (masterKey.length !== 32) throw new Error('the master key must be 32 bytes');
  const publicKeyPem = createPublicKey(privateKey)
    .export({ type: 'spki', format: 'pem' })
    .toString();
  return {
    publicKeyPem,
    sign: (data) => sign(null, Buffer.from(data), privateKey).toString('base64'),
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    open(sealed) {
      if (!sealed.startsWith('v1:')) throw new Error('unknown sealed-secret format');
      const raw = Buffer.from(sealed.slice(3), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', masterKey, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

function writePrivate(path: string, data: string | Buffer): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, data, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

/**
 * Load the keyring from `dir` (`signing.pem`, `master.key`), creating missing keys. The
 * environment can supply them instead: SAFFRON_SIGNING_KEY (PKCS#8 PEM of an Ed25519 key)
 * and SAFFRON_MASTER_KEY (64 hex characters).
 */
export function loadKeyring(dir: string, env: NodeJS.ProcessEnv = process.env): Keyring {
  let privateKey: KeyObject;
  if (env.SAFFRON_SIGNING_KEY) privateKey = createPrivateKey(env.SAFFRON_SIGNING_KEY);
  else {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, 'signing.pem');
    if (!existsSync(path)) {
      const pair = generateKeyPairSync('ed25519');
      writePrivate(path, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    }
    privateKey = createPrivateKey(readFileSync(path));
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new Error('the signing key must be an Ed25519 private key');
  let masterKey: Buffer;
  if (env.SAFFRON_MASTER_KEY) {
    if (!/^[0-9a-f]{64}$/i.test(env.SAFFRON_MASTER_KEY))
      throw new Error('SAFFRON_MASTER_KEY must be 64 hexadecimal characters');
    masterKey = Buffer.from(env.SAFFRON_MASTER_KEY, 'hex');
  } else {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, 'master.key');
    if (!existsSync(path)) writePrivate(path, randomBytes(32).toString('hex'));
    masterKey = Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
  }
  return keyringOf(privateKey, masterKey);
}

/** A keyring that lives only in memory (tests, embedded use). */
export function ephemeralKeyring(): Keyring {
  return keyringOf(generateKeyPairSync('ed25519').privateKey, randomBytes(32));
}
