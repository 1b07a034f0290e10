/**
 * `saffron worker`: run ASYNC / PARALLEL tasks and the cluster's maintenance (zombie recovery,
 * PARALLEL timeouts, cron) until SIGINT or SIGTERM. Any number of workers share one
 * PostgreSQL database; on SQLite one worker serves the file.
 */
import type { Command } from 'commander';
import { parseInspectUrl } from '../../actors/index.js';
import { workflowWebhookHook } from '../../gateway/index.js';
import { CliExit, type CliIo } from '../io.js';
import {
  engineOptions,
  stepsRootOf,
  withRuntime,
  workflowsRegistry,
  type EngineOptions,
} from '../engineCommand.js';
import { untilSignal } from '../signals.js';

interface WorkerOptions extends EngineOptions {
  concurrency?: string;
  prefetch?: string;
  regions?: string;
  maintenance?: boolean;
  pollMs?: string;
  leaseMs?: string;
  heartbeatMs?: string;
  zombieAfterMs?: string;
  inspect?: URL;
}

const integer = (
  value: string | undefined,
  name: string,
  fallback: number,
  least: 0 | 1 = 1,
): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < least)
    throw new CliExit(
      2,
      `${name} must be a ${least === 1 ? 'positive' : 'non-negative'} integer, got '${value}'`,
    );
  return n;
};

/** Register `worker`. */
export function registerWorkerCommand(program: Command, io: CliIo): void {
  engineOptions(
    program
      .command('worker')
      .description(
        'run queued ASYNC/PARALLEL tasks, zombie recovery, timeouts and cron until SIGINT/SIGTERM',
      )
      .option('--concurrency <n>', 'tasks run at once (default 8)')
      .option(
        '--prefetch <n>',
        'tasks claimed ahead, started as running ones return (default 0; for short tasks with a backlog)',
      )
      .option(
        '--regions <list>',
        'serve only these data regions (comma-separated) and tasks without a region',
      )
      .option('--no-maintenance', 'run tasks only (no zombie recovery, timeouts or cron)')
      .option('--poll-ms <ms>', 'longest idle wait between polls (default 1000)')
      .option(
        '--heartbeat-ms <ms>',
        'how often a running workflow’s heartbeat is refreshed (default 30000)',
      )
      .option(
        '--zombie-after-ms <ms>',
        'a heartbeat older than this is a dead driver’s: recover its workflow (default 3 × heartbeat)',
      )
      .option(
        '--lease-ms <ms>',
        'how long a claimed task stays with this worker before another may take it over (default 300000)',
      )
      .option(
        '--inspect <url>',
        'stream workflow statecharts to Stately’s inspector at this ws:// or wss:// URL',
        parseInspectUrl,
      ),
  ).action(async (options: WorkerOptions) => {
    const concurrency = integer(options.concurrency, '--concurrency', 8);
    const prefetch = integer(options.prefetch, '--prefetch', 0, 0);
    const pollMs = integer(options.pollMs, '--poll-ms', 1000);
    const leaseMs = integer(options.leaseMs, '--lease-ms', 300_000);
    const heartbeatMs = integer(options.heartbeatMs, '--heartbeat-ms', 30_000);
    const zombieAfterMs = integer(options.zombieAfterMs, '--zombie-after-ms', heartbeatMs * 3);
    const regions = options.regions
      ?.split(',')
      .map((r) => r.trim())
      .filter(Boolean);
    const stepsRoot = stepsRootOf(options, io);
    const registry = await workflowsRegistry(options, io, stepsRoot);
    await withRuntime(
      options,
      io,
      {
        stepsRoot,
        registry,
        runtime: {
          heartbeatIntervalMs: heartbeatMs,
          taskLeaseMs: leaseMs,
          // a workflow a worker finishes ends here, not in a gateway: its workflow.completed /
          // workflow.failed webhook event is written here (a no-op on an SQLite store)
          onSettled: workflowWebhookHook(),
          ...(options.inspect ? { inspect: options.inspect } : {}),
        },
        // task completions, the LISTEN connection and the maintenance lock each hold one
        connections: concurrency * 2 + 4,
      },
      async (runtime) => {
        const service = runtime.serve({
          batch: concurrency,
          prefetch,
          pollMs,
          leaseMs,
          zombieAfterMs,
          maintenanceEveryMs: Math.min(5000, zombieAfterMs),
          maintenance: options.maintenance !== false,
          ...(regions?.length ? { regions } : {}),
          onRound: (round) => {
            const m = round.maintenance;
            const extra = m
              ? `, recovered ${m.recovered}, released ${m.released}, timeouts ${m.timeouts}, scheduled ${m.scheduled}`
              : '';
            io.stderr.write(`worker: ran ${round.tasks} task(s)${extra}\n`);
          },
        });
        io.stderr.write(
          `worker: serving tasks (concurrency ${concurrency}${prefetch ? `, prefetch ${prefetch}` : ''}${regions?.length ? `, regions ${regions.join(',')}` : ''}); Ctrl-C stops\n`,
        );
        const signal = await untilSignal();
        io.stderr.write(`worker: ${signal}, finishing in-flight work\n`);
        await service.stop();
        io.stdout.write(`${JSON.stringify({ stopped: true, tasks_run: service.tasksRun })}\n`);
      },
    );
  });
}
