/**
 * CPU time spent by the worker processes and by the PostgreSQL server over a span, read from
 * /proc (Linux; elsewhere the figures are absent). They show what one system's task costs
 * against another's on the same machine, split between the workers and the database server.
 * They move with the machine's speed too (the same Saffron code measured 0.72–0.99 ms per
 * task on one day), so they explain a ratio rather than settle it.
 *
 * The server's share counts every process named `postgres` (backends of every client of the
 * run, the benchmark's own progress queries included, and background writers), the same for
 * every system. A backend that exits within the span loses its time, which is why the span is
 * taken while every worker's pool is open.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/** CPU ticks (user + system, all threads) by pid, in one pass over /proc, of the processes `kind` names. */
function ticksOf(
  kind: (pid: number, name: string) => 'workers' | 'server' | undefined,
): CpuReading | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const out: CpuReading = { workers: new Map(), server: new Map() };
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const close = stat.lastIndexOf(')');
    const which = kind(pid, stat.slice(stat.indexOf('(') + 1, close));
    if (!which) continue;
    // after the name: state is field 3; utime and stime are fields 14 and 15
    const fields = stat.slice(close + 2).split(' ');
    out[which].set(pid, Number(fields[11]) + Number(fields[12]));
  }
  return out;
}

/** A reading of the CPU time spent so far. */
export interface CpuReading {
  workers: Map<number, number>;
  server: Map<number, number>;
}

/** CPU seconds spent between two readings. */
export interface CpuSpent {
  workerSeconds: number;
  serverSeconds: number;
}

/** Read the CPU time of `workerPids` and of the PostgreSQL server now (undefined off Linux). */
export function readCpu(workerPids: readonly number[]): CpuReading | undefined {
  const wanted = new Set(workerPids);
  return ticksOf((pid, name) =>
    wanted.has(pid) ? 'workers' : name === 'postgres' ? 'server' : undefined,
  );
}

/** CPU seconds spent from `before` to `after` (a process first seen in `after` counts whole). */
export function cpuBetween(before: CpuReading, after: CpuReading): CpuSpent {
  const spent = (a: Map<number, number>, b: Map<number, number>) => {
    let ticks = 0;
    for (const [pid, t] of b) ticks += t - (a.get(pid) ?? 0);
    return ticks / TICKS_PER_S;
  };
  return {
    workerSeconds: spent(before.workers, after.workers),
    serverSeconds: spent(before.server, after.server),
  };
}
