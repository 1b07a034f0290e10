/**
 * The `saffron` command line. Thin by design: it parses arguments and calls runtime/,
 * actors/, gateway/ and edge/. `main` takes its I/O as a parameter and returns the exit code,
 * so tests run it in-process.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerCloudCommands } from './commands/cloud.js';
import { registerDbCommands } from './commands/db.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerEdgeCommands } from './commands/edge.js';
import { registerRunCommand } from './commands/run.js';
import { registerScheduleCommands } from './commands/schedules.js';
import { registerStartCommand } from './commands/start.js';
import { registerValidateCommand } from './commands/validate.js';
import { registerWasmCommands } from './commands/wasm.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerWorkflowCommands } from './commands/workflows.js';
import { type CliIo, processIo, reportError } from './io.js';

function packageVersion(): string {
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'saffron' && pkg.version) return pkg.version;
    } catch {
      // not at this depth (source vs. dist layout)
    }
  }
  return '0.0.0';
}

/** Build the command tree bound to `io`. */
export function buildProgram(io: CliIo): Command {
  const program = new Command()
    .name('saffron')
    .description(
      'Durable workflow runtime for payment devices: cloud control plane and offline-first edge agents',
    )
    .version(packageVersion())
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();
  registerDbCommands(program, io);
  registerValidateCommand(program, io);
  registerRunCommand(program, io);
  registerStartCommand(program, io);
  registerWorkflowCommands(program, io);
  registerWorkerCommand(program, io);
  registerCloudCommands(program, io);
  registerScheduleCommands(program, io);
  registerWasmCommands(program, io);
  registerDemoCommand(program, io);
  registerEdgeCommands(program, io);
  for (const command of program.commands) {
    command.exitOverride().configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });
    for (const sub of command.commands)
      sub.exitOverride().configureOutput({
        writeOut: (s) => io.stdout.write(s),
        writeErr: (s) => io.stderr.write(s),
      });
  }
  return program;
}

/** Run the CLI with `argv` (without node and script) and return the exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and version exit 0; usage errors were already printed by commander
      return error.exitCode === 0 ? 0 : 2;
    }
    return reportError(io, error, argv.includes('--json'));
  }
}
