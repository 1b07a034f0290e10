/**
 * Helpers for tests of the edge components: a SQLite edge store in a temp folder, timers a
 * test fires by hand (so a poll interval or a reconnect delay is checked without waiting),
 * and an event log a test waits on (never on time).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EdgeTimers } from '../../edge/index.js';
import { asEdge, ensureEdgeSchema, openStore, type EdgeStore } from '../../runtime/index.js';

/** An edge store on a temp file. */
export interface EdgeStoreHandle {
  store: EdgeStore;
  dir: string;
  file: string;
  close(): Promise<void>;
}

/** Open a SQLite edge store with its schema in a fresh temp folder. */
export async function openEdgeStore(): Promise<EdgeStoreHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-edge-'));
  const file = join(dir, 'edge.db');
  const store = asEdge(await openStore(file));
  await ensureEdgeSchema(store);
  return {
    store,
    dir,
    file,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A scheduled callback of {@link ManualTimers}. */
export interface ManualTimer {
  ms: number;
  callback: () => void;
}

/** Timers that run only when the test says so. */
export interface ManualTimers extends EdgeTimers {
  /** Callbacks scheduled and neither run nor cleared. */
  pending(): ManualTimer[];
  /** Run (and remove) the pending callbacks matching `filter` (all by default). */
  fire(filter?: (timer: ManualTimer) => boolean): number;
}

/** Create manual timers. */
export function manualTimers(): ManualTimers {
  const timers = new Set<ManualTimer>();
  return {
    setTimeout(callback, ms) {
      const timer = { ms, callback };
      timers.add(timer);
      return timer;
    },
    clearTimeout(handle) {
      timers.delete(handle as ManualTimer);
    },
    pending: () => [...timers],
    fire(filter = () => true) {
      const due = [...timers].filter(filter);
      for (const timer of due) {
        timers.delete(timer);
        timer.callback();
      }
      return due.length;
    },
  };
}

/** Events collected from a component, with waits for the ones to come. */
export interface EventLog<E extends { type: string }> {
  readonly events: E[];
  /** The listener to hand to the component. */
  push: (event: E) => void;
  /** The first event (already seen or to come) of `type` matching `match`. */
  next<T extends E['type']>(
    type: T,
    match?: (event: Extract<E, { type: T }>) => boolean,
  ): Promise<Extract<E, { type: T }>>;
  /** The first event of `type` matching `match` still to come (ignores those seen). */
  upcoming<T extends E['type']>(
    type: T,
    match?: (event: Extract<E, { type: T }>) => boolean,
  ): Promise<Extract<E, { type: T }>>;
  /** Events of `type` seen so far. */
  all<T extends E['type']>(type: T): Extract<E, { type: T }>[];
}

/** Create an event log. */
export function eventLog<E extends { type: string }>(): EventLog<E> {
  const events: E[] = [];
  const waiters: { test: (e: E) => boolean; resolve: (e: E) => void }[] = [];
  return {
    events,
    push(event) {
      events.push(event);
      for (const waiter of [...waiters])
        if (waiter.test(event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
    },
    next(type, match = () => true) {
      const test = (e: E) => e.type === type && match(e as Extract<E, { type: typeof type }>);
      const seen = events.find(test);
      if (seen) return Promise.resolve(seen as Extract<E, { type: typeof type }>);
      return new Promise((resolve) => waiters.push({ test, resolve: resolve as (e: E) => void }));
    },
    upcoming(type, match = () => true) {
      const test = (e: E) => e.type === type && match(e as Extract<E, { type: typeof type }>);
      return new Promise((resolve) => waiters.push({ test, resolve: resolve as (e: E) => void }));
    },
    all: (type) => events.filter((e) => e.type === type) as Extract<E, { type: typeof type }>[],
  };
}
