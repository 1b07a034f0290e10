/**
 * The current ETag of each device's configuration and fraud-rules documents, held in memory
 * so that a poll whose `If-None-Match` still matches is answered 304 without reading the
 * device, its layers, assignments or policies. Building either document takes several
 * statements; devices poll far more often than operators change anything.
 *
 * A tag is dropped when its inputs change, through the change bus: a device's own changes
 * (type, device layer, assignments, deletion) drop its tags; a fleet or device-type layer or
 * any policy change drops every tag (coarse, and rare). Tags expire after `ttlMs` anyway,
 * and none is kept or served while the gateway cannot vouch that it hears changes in time.
 */
import type { CacheChange } from '../../runtime/index.js';
import {
  CACHE_DEFAULTS,
  createInvalidatingCache,
  type CacheBounds,
  type InvalidatingCache,
} from '../cache/invalidatingCache.js';

/** The document ETags of one gateway, by device id. */
export interface DocumentTags {
  /** `saffron.device-config.v1` by device id. */
  readonly config: InvalidatingCache<string>;
  /** `saffron.fraud-rules.v1` by device id (`''`: the fleet default). */
  readonly fraudRules: InvalidatingCache<string>;
  /** Drop what `change` names; everything when undefined. */
  apply(change: CacheChange | undefined): void;
}

/** Empty tag caches that keep entries while `trusted()`. */
export function createDocumentTags(trusted: () => boolean, bounds: CacheBounds = {}): DocumentTags {
  const settings = {
    maxEntries: bounds.maxEntries ?? CACHE_DEFAULTS.maxEntries,
    ttlMs: bounds.ttlMs ?? CACHE_DEFAULTS.ttlMs,
    trusted,
  };
  const config = createInvalidatingCache<string>(settings);
  const fraudRules = createInvalidatingCache<string>(settings);
  return {
    config,
    fraudRules,
    apply(change) {
      if (change === undefined || change.kind === 'documents') {
        config.clear();
        fraudRules.clear();
        return;
      }
      if (change.kind !== 'devices') return;
      for (const id of change.deviceIds) {
        config.invalidate(id);
        fraudRules.invalidate(id);
      }
    },
  };
}
