import { describe, expect, it } from 'vitest';
import { envSecrets, mapSecrets } from '../../runtime/template/index.js';

describe('envSecrets', () => {
  it('reads SAFFRON_SECRET_<NAME> from the given environment', () => {
    const env = { SAFFRON_SECRET_API_KEY: 'k1', API_KEY: 'not-this' };
    const secrets = envSecrets(env);
    expect(secrets.get('API_KEY')).toBe('k1');
    expect(secrets.get('api_key')).toBe('k1');
    expect(secrets.get('OTHER')).toBeUndefined();
  });

  it('reads the environment at lookup time and defaults to process.env', () => {
    const env: NodeJS.ProcessEnv = {};
    const secrets = envSecrets(env);
    expect(secrets.get('LATE')).toBeUndefined();
    env.SAFFRON_SECRET_LATE = 'now';
    expect(secrets.get('LATE')).toBe('now');

    const name = `TEST_${process.pid}`;
    process.env[`SAFFRON_SECRET_${name}`] = 'from-process';
    try {
      expect(envSecrets().get(name)).toBe('from-process');
    } finally {
      delete process.env[`SAFFRON_SECRET_${name}`];
    }
  });
});

describe('mapSecrets', () => {
  it('serves a copy of the given values', () => {
    const values: Record<string, string> = { A: '1' };
    const secrets = mapSecrets(values);
    values.A = 'changed';
    expect(secrets.get('A')).toBe('1');
    expect(secrets.get('B')).toBeUndefined();
    expect(secrets.get('constructor')).toBeUndefined();
  });
});
