/**
 * The signature on delivered commands: verifiable by the device with the cloud's public key,
 * kept for redeliveries (a hash instead of a signature), signed again when the signed content
 * changed or once the command's ack dropped it.
 */
import { describe, expect, it } from 'vitest';
import { ephemeralKeyring } from '../../gateway/index.js';
import type { CommandRecord } from '../../gateway/commands/store/commands/command.js';
import { createCommandSigner } from '../../gateway/link/commandSigner.js';
import { verifyCommandSignature } from '../../runtime/index.js';

const command = (over: Partial<CommandRecord> = {}): CommandRecord => ({
  commandId: '5b0f8a52-9f0e-4d55-9a55-6f1f8f3d2c11',
  deviceId: 'pos-1',
  commandType: 'UPDATE_CONFIG',
  payload: { reason: 'test' },
  status: 'DELIVERED',
  retryCount: 0,
  maxRetries: 3,
  createdBy: 'admin',
  result: null,
  error: null,
  nextAttemptAt: null,
  deliveredAt: new Date('2026-11-30T10:00:01Z'),
  expiresAt: null,
  createdAt: new Date('2026-11-30T10:00:00Z'),
  executedAt: null,
  batchId: null,
  broadcastId: null,
  ...over,
});

/** A signer over a real key, counting the signatures it makes. */
function countingSigner() {
  const keys = ephemeralKeyring();
  let signatures = 0;
  const signer = createCommandSigner({
    sign: (text) => (signatures++, keys.sign(text)),
  });
  return { signer, keys, signatures: () => signatures };
}

describe('command signer', () => {
  it('signs what the device verifies, and a redelivery costs no second signature', () => {
    const { signer, keys, signatures } = countingSigner();
    const first = signer.delivered(command());
    expect(verifyCommandSignature(first, 'pos-1', keys.publicKeyPem)).toBe(true);
    expect(verifyCommandSignature(first, 'pos-2', keys.publicKeyPem)).toBe(false);
    expect(signer.delivered(command()).signature).toBe(first.signature);
    expect(signatures()).toBe(1);
  });

  it('signs again when the signed content changed', () => {
    const { signer, keys, signatures } = countingSigner();
    signer.sign(command());
    const changed = signer.delivered(command({ payload: { reason: 'other' } }));
    expect(signatures()).toBe(2);
    expect(verifyCommandSignature(changed, 'pos-1', keys.publicKeyPem)).toBe(true);
  });

  it('keeps nothing of a command it was told to forget (its ack is recorded)', () => {
    const { signer, signatures } = countingSigner();
    signer.sign(command());
    signer.forget(command().commandId);
    signer.forget('not-kept'); // nothing to drop: no error
    signer.sign(command());
    expect(signatures()).toBe(2);
  });
});
