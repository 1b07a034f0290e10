/** Run the CLI in-process and capture what it printed. */
import { main } from '../../bin/cli.js';

/** The outcome of one CLI run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `saffron …args` with the given environment and working directory. */
export async function runCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (t) => void (stdout += t) },
    stderr: { write: (t) => void (stderr += t) },
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
  });
  return { code, stdout, stderr };
}
