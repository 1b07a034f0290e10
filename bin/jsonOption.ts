/**
 * JSON objects given on the command line (`--data`, `--input`) or in a file (`--data-file`,
 * one object, or one per line in a JSON Lines file).
 * A typo in hand-written JSON is the commonest mistake, so the message says where it is.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JsonObject } from '../runtime/index.js';
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

function readDataFile(name: string, io: CliIo): string {
  try {
    return readFileSync(resolve(io.cwd, name), 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(error);
    throw new CliExit(2, `cannot read data file ${name}: ${reason}`);
  }
}

/** The initial data from `--data` or `--data-file` (at most one of them), if any. */
export function readDataOption(options: DataOptions, io: CliIo): JsonObject | undefined {
  if (options.data !== undefined && options.dataFile !== undefined)
    throw new CliExit(2, 'give either --data or --data-file, not both');
  if (options.data !== undefined) return parseJsonObject(options.data, '--data');
  if (options.dataFile === undefined) return undefined;
  return parseJsonObject(readDataFile(options.dataFile, io), `data file ${options.dataFile}`);
}

/** Whether a data file is JSON Lines (`.jsonl`, `.ndjson`): one workflow's data per line. */
export function isJsonLines(file: string): boolean {
  return /\.(jsonl|ndjson)$/i.test(file);
}

/** Most bad lines listed in one error. */
const SHOWN_BAD_LINES = 10;

/** One line of a JSON Lines file as an object, or what is wrong with it. */
function parseLine(line: string): JsonObject | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /at position (\d+)/.exec(message)?.[1];
    const column = position === undefined ? '' : ` at column ${Number(position) + 1}`;
    return `not valid JSON${column}: ${message}`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `must be a JSON object, got ${describe(value)}`;
  return value as JsonObject;
}

/**
 * The initial data of each workflow in a JSON Lines `--data-file`: one object per non-empty
 * line. Every line is checked before the caller starts anything; bad lines are an error that
 * names them (`FILE:LINE: problem`, the first ten), so a typo on line 40,000 does not leave
 * 39,999 workflows started and the rest not.
 */
export function readDataLines(file: string, io: CliIo): JsonObject[] {
  const items: JsonObject[] = [];
  const bad: string[] = [];
  let badCount = 0;
  readDataFile(file, io)
    .split('\n')
    .forEach((raw, index) => {
      const line = raw.trim();
      if (line === '') return;
      const parsed = parseLine(line);
      if (typeof parsed !== 'string') {
        items.push(parsed);
        return;
      }
      badCount++;
      if (bad.length < SHOWN_BAD_LINES) bad.push(`  ${file}:${index + 1}: ${parsed}`);
    });
  if (badCount > 0) {
    const more = badCount > bad.length ? `\n  … and ${badCount - bad.length} more` : '';
    throw new CliExit(
      2,
      `data file ${file} has ${badCount} bad line(s); nothing was started\n${bad.join('\n')}${more}`,
    );
  }
  if (items.length === 0) throw new CliExit(2, `data file ${file} has no data lines`);
  return items;
}
