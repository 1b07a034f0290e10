/**
 * JSON objects given on the command line (`--data`, `--input`) or in a file (`--data-file`).
 * A typo in hand-written JSON is the commonest mistake, so the message says where it is.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JsonObject } from '../runtime/model/json.js';
import { CliExit, type CliIo } from './io.js';

function where(text: string, message: string): string {
  const position = /at position (\d+)/.exec(message)?.[1];
  const offset =
    position !== undefined
      ? Number(position)
      : /end of JSON input/.test(message)
        ? text.length
        : undefined;
  if (offset === undefined) return '';
  const before = text.slice(0, offset).split('\n');
  return ` at line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Parse `text` as a JSON object; `what` names its source in messages (`--data`). */
export function parseJsonObject(text: string, what: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new CliExit(2, `${what} is not valid JSON${where(text, message)}: ${message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliExit(2, `${what} must be a JSON object, got ${describe(value)}`);
  return value as JsonObject;
}

/** Options that give a workflow's initial data. */
export interface DataOptions {
  data?: string;
  dataFile?: string;
}

/** The initial data from `--data` or `--data-file` (at most one of them), if any. */
export function readDataOption(options: DataOptions, io: CliIo): JsonObject | undefined {
  if (options.data !== undefined && options.dataFile !== undefined)
    throw new CliExit(2, 'give either --data or --data-file, not both');
  if (options.data !== undefined) return parseJsonObject(options.data, '--data');
  if (options.dataFile === undefined) return undefined;
  const file = resolve(io.cwd, options.dataFile);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(error);
    throw new CliExit(2, `cannot read data file ${options.dataFile}: ${reason}`);
  }
  return parseJsonObject(text, `data file ${options.dataFile}`);
}
