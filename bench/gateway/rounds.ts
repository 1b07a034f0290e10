/**
 * Rates measured side by side, in rounds. For the connects, every server in turn is started
 * afresh in each round (cold caches, cold code), the same devices connect to it from the
 * same number of client processes, and it is stopped — so the servers of one round are
 * measured within a minute of each other. On a shared machine the speed of the moment moves
 * a rate by half between runs; a ratio of two rates taken in the same round moves much less,
 * and the median over rounds drops a round that a pause of the machine spoiled.
 */
import { median } from '../harness.js';
import type { Child } from './child.js';
import type { IdleResult } from './idle.js';

/** One server that takes part in every round. */
export interface Contender {
  name: string;
  start(): Promise<{ child: Child; url: string }>;
  /** Runs after the clients closed and before the server is stopped (e.g. let it record the disconnects). */
  settle?(child: Child): Promise<void>;
  stop(child: Child): void;
}

/** Each server's rate (handshakes/s, polls/s), one per round, in order. */
export type RoundRates = Map<string, number[]>;

/**
 * Run `rounds` rounds of `contenders`, each connecting through `connect` (the server, its
 * URL and a third octet for the clients' loopback addresses that no other part uses).
 */
export async function measureConnectRounds(options: {
  contenders: readonly Contender[];
  rounds: number;
  firstSubnet: number;
  connect: (server: { child: Child; url: string }, subnet: number) => Promise<IdleResult>;
  progress: (m: string) => void;
}): Promise<RoundRates> {
  const { contenders, rounds, firstSubnet, connect, progress } = options;
  if (firstSubnet + rounds * contenders.length > 256)
    throw new Error(`too many connect rounds (${rounds}) for the clients' loopback addresses`);
  const rates: RoundRates = new Map(contenders.map((c) => [c.name, []]));
  let subnet = firstSubnet;
  for (let r = 1; r <= rounds; r++) {
    for (const contender of contenders) {
      progress(`connect round ${r}/${rounds}: ${contender.name}`);
      const server = await contender.start();
      try {
        const held = await connect(server, subnet++);
        if (held.failed > 0)
          throw new Error(
            `connect round ${r}, ${contender.name}: ${held.failed} connections failed (first: ${held.firstError})`,
          );
        rates.get(contender.name)!.push(held.held / held.connectSeconds);
        await contender.settle?.(server.child);
      } finally {
        contender.stop(server.child);
      }
    }
  }
  return rates;
}

/** The median over rounds of `a`'s rate divided by `b`'s in the same round. */
export function pairedMedian(rates: RoundRates, a: string, b: string): number {
  const over = rates.get(b) ?? [];
  return median((rates.get(a) ?? []).map((rate, i) => rate / over[i]!));
}
