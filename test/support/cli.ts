/** Run the CLI in-process and capture what it printed. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { main } from '../../bin/cli.js';

const CLI_LAUNCHER = fileURLToPath(new URL('../../bin/saffron.js', import.meta.url));

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

/**
 * Start `saffron cloud serve --port 0 --no-worker` as a real process with `env` in `cwd`;
 * `listening` resolves with its URL once it prints its `{listening}` line.
 */
export function serveCloud(env: NodeJS.ProcessEnv, cwd: string) {
  const child = spawn(
    process.execPath,
    [CLI_LAUNCHER, 'cloud', 'serve', '--port', '0', '--no-worker'],
    {
      env: { ...process.env, SAFFRON_HTTP_ALLOW_PRIVATE: 'loopback', ...env },
      cwd,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  let out = '';
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"listening"'));
      if (line) resolve((JSON.parse(line) as { listening: string }).listening);
    });
    child.on('exit', (code) => reject(new Error(`cloud serve exited early (${String(code)})`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, listening, exited };
}
