/**
 * Loading a workflow definition from YAML text or a file.
 *
 * The YAML is parsed into a document (not straight to JS) so every problem — syntax, schema,
 * cross-check or function resolution — can be reported with its line and column. All problems
 * are collected before anything is thrown, so the author sees the full list in one run.
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { SaffronError } from '../errors.js';
import { checkAiRuntimes, DEFAULT_AI_RUNTIMES } from './aiRuntimes.js';
import { checkDefinitionValue } from './check.js';
import { DefinitionError, type DefinitionIssue } from './errors.js';
import { toDefinitionIssue, type RawIssue } from './rawIssue.js';
import { checkFunctionResolution } from './resolveFunctions.js';
import type { AiRuntime } from './kinds.js';
import type { WorkflowDefinition } from './types.js';
import { isRecord } from './values.js';
import { locate } from './yamlLocation.js';

/** Options of {@link loadDefinition}. */
export interface LoadDefinitionOptions {
  /** File name used in issue messages. */
  file?: string;
  /** Folder that function paths are resolved under. */
  stepsRoot?: string;
  /** Import every function path (default: true when `stepsRoot` is given). */
  resolveFunctions?: boolean;
  /**
   * AI_INFERENCE runtimes the loading runtime can run (default {@link DEFAULT_AI_RUNTIMES}:
   * onnx and custom); a step naming another fails the load with `AI_RUNTIME_UNAVAILABLE`.
   */
  aiRuntimes?: readonly AiRuntime[];
}

/** A loaded definition and the warnings found while loading it. */
export interface LoadedDefinition {
  definition: WorkflowDefinition;
  warnings: DefinitionIssue[];
}

function byPosition(a: DefinitionIssue, b: DefinitionIssue): number {
  return (
    (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER) ||
    (a.column ?? 0) - (b.column ?? 0)
  );
}

function yamlIssues(doc: Document, lineCounter: LineCounter): DefinitionIssue[] {
  const toIssue = (
    problem: (typeof doc.errors)[number] | (typeof doc.warnings)[number],
    severity: 'error' | 'warning',
  ): DefinitionIssue => {
    const { line, col } = lineCounter.linePos(problem.pos[0]);
    return {
      severity,
      path: '',
      line,
      column: col,
      message: problem.message,
      code: problem.code === 'DUPLICATE_KEY' ? 'DUPLICATE_KEY' : 'YAML_SYNTAX',
    };
  };
  return [
    ...doc.errors.map((error) => toIssue(error, 'error')),
    ...doc.warnings.map((warning) => toIssue(warning, 'warning')),
  ];
}

/** YAML reads `workflow_version: 1.0` as the number 1; keep the text the author wrote. */
function keepVersionText(value: unknown, doc: Document): unknown {
  if (!isRecord(value) || typeof value.workflow_version !== 'number') return value;
  const node = doc.get('workflow_version', true);
  const text = isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
  return text === undefined ? value : { ...value, workflow_version: text };
}

/**
 * Parse, validate and (with `stepsRoot`) resolve the functions of a YAML workflow definition.
 * Throws {@link DefinitionError} listing every error and warning when any error is found.
 */
export async function loadDefinition(
  yamlText: string,
  options: LoadDefinitionOptions = {},
): Promise<LoadedDefinition> {
  const { file } = options;
  const lineCounter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntax = yamlIssues(doc, lineCounter);
  if (syntax.some((issue) => issue.severity === 'error')) {
    throw new DefinitionError(syntax.sort(byPosition), file === undefined ? {} : { file });
  }
  let value: unknown;
  try {
    value = keepVersionText(doc.toJS({ maxAliasCount: 100 }), doc);
  } catch (cause) {
    const issue: DefinitionIssue = {
      severity: 'error',
      path: '',
      line: 1,
      column: 1,
      code: 'YAML_SYNTAX',
      message: cause instanceof Error ? cause.message : String(cause),
    };
    throw new DefinitionError([issue], { ...(file === undefined ? {} : { file }), cause });
  }
  const checked = checkDefinitionValue(value);
  const raw: RawIssue[] = [
    ...checked.issues,
    ...checkAiRuntimes(checked.value, options.aiRuntimes ?? DEFAULT_AI_RUNTIMES),
  ];
  const { stepsRoot } = options;
  if (stepsRoot !== undefined && options.resolveFunctions !== false) {
    raw.push(...(await checkFunctionResolution(checked.value, stepsRoot)));
  }
  const issues = [
    ...syntax,
    ...raw.map((issue) => toDefinitionIssue(issue, locate(doc, lineCounter, issue.path, issue.at))),
  ].sort(byPosition);
  const warnings = issues.filter((issue) => issue.severity === 'warning');
  if (checked.definition === undefined || warnings.length !== issues.length) {
    throw new DefinitionError(issues, file === undefined ? {} : { file });
  }
  return { definition: checked.definition, warnings };
}

/**
 * Read and load a YAML definition file. Function paths resolve under `stepsRoot`, by default
 * the file's folder; pass `resolveFunctions: false` to skip importing them.
 */
export async function loadDefinitionFile(
  file: string,
  options: Omit<LoadDefinitionOptions, 'file'> = {},
): Promise<LoadedDefinition> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new SaffronError('DEFINITION_NOT_FOUND', `cannot read workflow definition ${file}`, {
      cause,
      details: { file },
    });
  }
  return loadDefinition(text, {
    file,
    stepsRoot: options.stepsRoot ?? path.dirname(path.resolve(file)),
    ...(options.resolveFunctions === undefined
      ? {}
      : { resolveFunctions: options.resolveFunctions }),
    ...(options.aiRuntimes === undefined ? {} : { aiRuntimes: options.aiRuntimes }),
  });
}
