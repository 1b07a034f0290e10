/**
 * A terminal loads what a terminal runs: importing the edge agent's entry loads no module of
 * the control plane (`gateway/`) — so none of the cloud-only tables' SQL — and neither the
 * PostgreSQL driver nor PGlite, which load only when a store of theirs is opened.
 */
import { describe, expect, it } from 'vitest';
import { moduleLoads } from '../support/moduleLoads.js';

describe('what importing the edge agent loads', () => {
  it('loads no control-plane module, no pg and no PGlite', () => {
    const { packages, ours } = moduleLoads([
      '--import',
      'tsx',
      '--input-type=module',
      '--eval',
      "await import('./edge/index.ts');",
    ]);
    // the import did happen: the agent and the engine's SQLite store are among the loads
    expect(ours).toContain('edge/index.ts');
    expect(ours).toContain('runtime/store/sqlite/openSqliteStore.ts');
    expect(packages.has('better-sqlite3')).toBe(true);
    expect(ours.filter((f) => f.startsWith('gateway/'))).toEqual([]);
    expect([...packages].filter((p) => p === 'pg' || p.startsWith('@electric-sql/'))).toEqual([]);
  });
});
