/**
 * Saffron's own lint rules: the direction of imports between the top-level folders, their
 * public entry points, and no run-time import cycles (docs/architecture.md#tiers).
 */
import { noImportCycles } from './rules/noImportCycles.js';
import { publicEntry } from './rules/publicEntry.js';
import { tierDirection } from './rules/tierDirection.js';

/** The plugin, registered as `saffron` in eslint.config.js. */
const plugin = {
  meta: { name: 'saffron' },
  rules: {
    'tier-direction': tierDirection,
    'public-entry': publicEntry,
    'no-import-cycles': noImportCycles,
  },
};

export default plugin;
