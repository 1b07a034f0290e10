/** Migration 0002_wasm_component_description: a free-text description of each registered WebAssembly binary. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0002_wasm_component_description',
  description: 'a free-text description of each registered WebAssembly binary',
  statements: [`ALTER TABLE wasm_components ADD COLUMN description TEXT`],
};
