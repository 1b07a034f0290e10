/**
 * What tests of a gateway's caches look at: the statements a store's pool runs, and whether
 * a gateway vouched for its caches while something ran.
 */
import type { Gateway } from '../../gateway/index.js';
import type { CloudStore } from '../../runtime/index.js';

/** Push the text of every statement `store`'s pool runs onto `into` (PostgreSQL only). */
export function recordStatements(store: CloudStore, into: string[]): void {
  const driver = store.driver;
  if (driver.dialect !== 'postgres') throw new Error('a PostgreSQL store was expected');
  const counted = new WeakSet<object>();
  driver.pool.on('acquire', (client) => {
    if (counted.has(client)) return;
    counted.add(client);
    const target = client as unknown as { query: (...args: unknown[]) => unknown };
    const query = target.query.bind(client);
    target.query = (...args: unknown[]) => {
      const first = args[0];
      into.push(typeof first === 'string' ? first : (first as { text: string }).text);
      return query(...args);
    };
  });
}

/**
 * Whether `gateway` vouched for its caches at every look while `run` ran (every 5 ms). It
 * keeps and uses nothing while it cannot vouch that it hears changes in time (its own
 * announcements late by more than 2 s, as on a loaded machine): a test of what it answers
 * from memory counts only a run during which it vouched throughout.
 */
export async function trustHeld(gateway: Gateway, run: () => Promise<void>): Promise<boolean> {
  const { changes, auth } = gateway.context;
  const trusted = () => changes.trusted() && auth.nonces.readsFromMemory();
  let held = trusted();
  const look = setInterval(() => (held &&= trusted()), 5);
  try {
    await run();
  } finally {
    clearInterval(look);
  }
  return held && trusted();
}
