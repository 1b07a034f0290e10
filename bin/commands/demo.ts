/**
 * `saffron demo` (`npm start`): the fleet demo on embedded defaults — see bin/demo/runDemo.ts.
 */
import type { Command } from 'commander';
import { runDemo } from '../demo/runDemo.js';
import { CliExit, type CliIo } from '../io.js';
import { untilSignal } from '../signals.js';

interface DemoFlags {
  devices: string;
  port: string;
  duration?: string;
  dataDir?: string;
  paymentGap: string;
}

function integer(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new CliExit(2, `--${name} must be an integer from ${min} to ${max}, got '${value}'`);
  return n;
}

/** Register `demo`. */
export function registerDemoCommand(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description(
      'run a cloud and a fleet of simulated terminals with payments, outages and rollouts (Ctrl-C stops)',
    )
    .option('--devices <n>', 'simulated terminals', '20')
    .option('--port <port>', 'port of the cloud and its dashboard (a taken one falls back)', '8080')
    .option('--duration <seconds>', 'stop by itself, check exactly-once, exit 1 if it fails')
    .option('--data-dir <dir>', 'keep the demo data here (default: a temporary folder)')
    .option('--payment-gap <seconds>', 'mean seconds between payments at a terminal', '1')
    .action(async (flags: DemoFlags) => {
      const devices = integer('devices', flags.devices, 1, 500);
      const port = integer('port', flags.port, 0, 65535);
      const durationSeconds =
        flags.duration === undefined ? undefined : integer('duration', flags.duration, 5, 86_400);
      const gap = Number(flags.paymentGap);
      if (!Number.isFinite(gap) || gap < 0.05 || gap > 60)
        throw new CliExit(
          2,
          `--payment-gap must be from 0.05 to 60 seconds, got '${flags.paymentGap}'`,
        );
      const result = await runDemo(
        {
          devices,
          port,
          paymentGapSeconds: gap,
          stopRequested: untilSignal(),
          ...(durationSeconds !== undefined ? { durationSeconds } : {}),
          ...(flags.dataDir !== undefined ? { dataDir: flags.dataDir } : {}),
        },
        io,
      );
      if (!result.verdict.ok) throw new CliExit(1, 'demo: the exactly-once check failed');
    });
}
