/**
 * The `saffron` command line. Thin by design: it parses arguments and calls runtime/,
 * actors/, gateway/ and edge/. `main` takes its I/O as a parameter and returns the exit code,
 * so tests run it in-process.
 *
 * Commands load lazily: only the module of the command being run is imported, so
 * `saffron --version` and `--help` load no engine, database driver or server, and `validate`
 * does not pay for the cloud's. The others appear in the help as stubs (name, arguments,
 * summary) from {@link COMMANDS}; a test keeps them equal to what each module registers.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Help } from 'commander';
import { type CliIo, processIo, reportError } from './io.js';

/** The npm package this CLI ships in. */
export const PACKAGE_NAME = '@saffron-dev/saffron';

function packageVersion(): string {
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === PACKAGE_NAME && pkg.version) return pkg.version;
    } catch {
      // not at this depth (source vs. dist layout)
    }
  }
  return '0.0.0';
}

type Register = (program: Command, io: CliIo) => void;

/** A top-level command as the help lists it before its module is loaded. */
export interface CommandStub {
  readonly name: string;
  /** What follows the name in the help's command list, e.g. `[options] <workflow>`. */
  readonly term: string;
  readonly summary: string;
}

/** A command module: the top-level commands it registers, and how to load it. */
export interface CommandModule {
  readonly commands: readonly CommandStub[];
  readonly load: () => Promise<Register>;
}

const stub = (name: string, term: string, summary: string): CommandStub => ({
  name,
  term,
  summary,
});

/** Every command module, in the order the help lists them. */
export const COMMANDS: readonly CommandModule[] = [
  {
    commands: [stub('db', '', 'manage the database schema')],
    load: async () => (await import('./commands/db.js')).registerDbCommands,
  },
  {
    commands: [
      stub(
        'validate',
        '[options] <files...>',
        'check workflow definitions; exit 1 and list every problem when one is invalid',
      ),
    ],
    load: async () => (await import('./commands/validate.js')).registerValidateCommand,
  },
  {
    commands: [
      stub(
        'run',
        '[options] <workflow>',
        'start a workflow and drive it until it completes, fails or waits; exit 1 when it ends FAILED or CANCELLED',
      ),
    ],
    load: async () => (await import('./commands/run.js')).registerRunCommand,
  },
  {
    commands: [
      stub(
        'start',
        '[options] <workflow>',
        'create workflows and run each until it first waits (tasks, a human, a sub-workflow, `next`) or ends, then return; queued tasks are left to `saffron worker`',
      ),
    ],
    load: async () => (await import('./commands/start.js')).registerStartCommand,
  },
  {
    commands: [
      stub(
        'resume',
        '[options] <id>',
        'give input to a workflow waiting for a human (or undo a pause) and drive it until it is no longer ACTIVE',
      ),
      stub('list', '[options]', 'list workflows, newest first'),
      stub('show', '[options] <id>', 'show a workflow with its state and audit trail'),
      stub(
        'retry',
        '[options] <id>',
        'restart a FAILED, FAILED_ROLLED_BACK or CANCELLED workflow and drive it until it is no longer ACTIVE',
      ),
      stub('cancel', '[options] <id>', 'cancel a workflow that has not ended'),
      stub('pause', '[options] <id>', 'pause a workflow: nothing runs until `saffron resume`'),
    ],
    load: async () => (await import('./commands/workflows.js')).registerWorkflowCommands,
  },
  {
    commands: [
      stub(
        'worker',
        '[options]',
        'run queued ASYNC/PARALLEL tasks, zombie recovery, timeouts and cron until SIGINT/SIGTERM',
      ),
    ],
    load: async () => (await import('./commands/worker.js')).registerWorkerCommand,
  },
  {
    commands: [
      stub('cloud', '', 'the cloud control plane'),
      stub('users', '', 'operator accounts (API tokens)'),
    ],
    load: async () => (await import('./commands/cloud.js')).registerCloudCommands,
  },
  {
    commands: [stub('schedules', '', 'cron schedules registered by CRON_SCHEDULE steps')],
    load: async () => (await import('./commands/schedules.js')).registerScheduleCommands,
  },
  {
    commands: [
      stub('wasm', '', 'WebAssembly binaries of WASM steps (device_wasm_cache or wasm_components)'),
    ],
    load: async () => (await import('./commands/wasm.js')).registerWasmCommands,
  },
  {
    commands: [
      stub(
        'demo',
        '[options]',
        'run a cloud and a fleet of simulated terminals with payments, outages and rollouts (Ctrl-C stops)',
      ),
    ],
    load: async () => (await import('./commands/demo.js')).registerDemoCommand,
  },
  {
    commands: [stub('edge', '', 'the edge agent of a payment terminal')],
    load: async () => (await import('./commands/edge.js')).registerEdgeCommands,
  },
];

/**
 * The name of the command `argv` runs (`help <name>` included), or undefined for the
 * program's own `--help` / `--version` or no command at all.
 */
function commandNamed(argv: readonly string[]): string | undefined {
  const positional = argv.filter((a) => !a.startsWith('-'));
  return positional[0] === 'help' ? positional[1] : positional[0];
}

/**
 * Build the command tree bound to `io`: the modules of the commands named in `load` (all of
 * them for `'all'`) register themselves in full, the others as help stubs.
 */
export async function buildProgram(
  io: CliIo,
  load: readonly string[] | 'all' = 'all',
): Promise<Command> {
  const stubTerms = new WeakMap<Command, string>();
  const program = new Command()
    .name('saffron')
    .description(
      'Durable workflow runtime for payment devices: cloud control plane and offline-first edge agents',
    )
    .version(packageVersion())
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({
      subcommandTerm: (cmd) => {
        const term = stubTerms.get(cmd);
        if (term === undefined) return new Help().subcommandTerm(cmd);
        return term === '' ? cmd.name() : `${cmd.name()} ${term}`;
      },
    })
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();
  for (const module of COMMANDS) {
    const wanted = load === 'all' || module.commands.some((c) => load.includes(c.name));
    if (wanted) {
      (await module.load())(program, io);
      continue;
    }
    for (const c of module.commands) {
      // a stub is never run: its own name in argv would have loaded the module
      stubTerms.set(program.command(c.name).description(c.summary), c.term);
    }
  }
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
  try {
    const name = commandNamed(argv);
    const program = await buildProgram(io, name === undefined ? [] : [name]);
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
