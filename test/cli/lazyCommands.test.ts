/**
 * The CLI loads only the module of the command it runs; the others appear in the help as
 * stubs written in bin/cli.ts. These tests keep each stub equal to what its module
 * registers, and check that `--version` / `--help` / `validate` leave the heavy modules
 * (engine runtime, database drivers, servers) unloaded, in a fresh process.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMANDS } from '../../bin/cli.js';
import type { CliIo } from '../../bin/io.js';
import { runCli } from '../support/cli.js';
import { moduleLoads } from '../support/moduleLoads.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const silent: CliIo = {
  stdout: { write: () => true },
  stderr: { write: () => true },
  env: {},
  cwd: ROOT,
};

describe('lazy command registration', () => {
  it('lists every command module with the name, arguments and summary it registers', async () => {
    const help = new Help();
    for (const module of COMMANDS) {
      const program = new Command();
      (await module.load())(program, silent);
      const registered = program.commands.map((c) => {
        const term = help.subcommandTerm(c);
        return {
          name: c.name(),
          term: term.slice(c.name().length).trim(),
          summary: c.description(),
        };
      });
      expect(registered).toEqual(module.commands.map((c) => ({ ...c })));
    }
  });

  it('prints the same help whether the command modules are loaded or not', async () => {
    const render = async (load: readonly string[] | 'all') => {
      const program = await buildProgram(silent, load);
      return program.helpInformation();
    };
    expect(await render([])).toBe(await render('all'));
  });

  it('runs a command whose module was not loaded by the help', async () => {
    const run = await runCli(['validate', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: saffron validate [options] <files...>');
    const unknown = await runCli(['lst']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Did you mean list?');
  });

  it('loads no engine, driver or server for --version and --help', () => {
    // a fresh process through the checkout's launcher
    for (const argv of [['--version'], ['--help']]) {
      const { packages, ours } = moduleLoads([join(ROOT, 'bin/saffron.js'), ...argv]);
      // commander, and tsx (with esbuild) that runs the source in a checkout
      expect([...packages].sort()).toEqual(['commander', 'esbuild', 'tsx']);
      // of the library, only the error classes the CLI reports with
      expect(ours.filter((f) => !f.startsWith('bin/'))).toEqual(['runtime/errors.ts']);
      expect(ours).toContain('bin/cli.ts');
    }
  });
});
