/**
 * The machine's own latency tail: a fixed job of plain JavaScript arithmetic (no allocation,
 * no I/O, no garbage), sized to take a given time, run back to back. Every run of it does the
 * same work, so any spread between its p50 and its p99 comes from the machine — the scheduler,
 * other tenants of the host, frequency changes — and no code running on that machine can have
 * a tail shorter than it for work of that length.
 */
import { percentile } from '../harness.js';

/** The job: `rounds` steps of a multiply-and-modulo chain (the result keeps it from being elided). */
function job(rounds: number, seed: number): number {
  let x = seed;
  for (let i = 0; i < rounds; i++) x = (x * 31 + i) % 1_000_003;
  return x;
}

/** How long each of `count` runs of `rounds` took (ms), ascending. */
function runJobs(rounds: number, count: number): number[] {
  const times: number[] = [];
  let sink = 0;
  for (let r = 0; r < count; r++) {
    const t = performance.now();
    sink += job(rounds, r);
    times.push(performance.now() - t);
  }
  if (sink < 0) throw new Error('unreachable'); // uses the results
  return times.sort((a, b) => a - b);
}

/** p50 and p99 (ms) of `count` runs of a job sized to take about `targetMs`. */
export function cpuJobTail(targetMs: number, count: number): { p50: number; p99: number } {
  let rounds = 100_000;
  for (let i = 0; i < 3; i++)
    rounds = Math.max(1000, Math.round((rounds * targetMs) / percentile(runJobs(rounds, 15), 50)));
  const times = runJobs(rounds, count);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}
