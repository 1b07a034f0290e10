/**
 * Deny by default: every preview1 function node:wasi offers that names a descriptor, a path,
 * a socket or the process is implemented by Saffron's in-memory stdio, never by uvwasi.
 */
import { WASI } from 'node:wasi';
import { describe, expect, it } from 'vitest';
import { guestImports, type GuestIo } from '../../runtime/wasm/guestIo.js';

describe('guest imports', () => {
  it('cover every fd_, path_, sock_ and proc_ function node:wasi has', () => {
    const offered = Object.keys(
      (new WASI({ version: 'preview1' }).getImportObject() as Record<string, object>)
        .wasi_snapshot_preview1!,
    );
    const ours = guestImports(() => undefined as unknown as GuestIo);
    const touchy = offered.filter((name) => /^(fd|path|sock|proc)_/.test(name));
    expect(touchy.length).toBeGreaterThan(30);
    expect(touchy.filter((name) => !(name in ours))).toEqual([]);
  });
});
