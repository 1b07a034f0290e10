/**
 * Step function paths: parsing and resolution to a callable.
 *
 * Two forms are accepted. `payments.checks.floor_limit` is a Python-style import path (the form
 * definitions written for other engines use): module `payments/checks`, looked up as `.js`,
 * `.mjs`, then `.ts` under the steps root, export `floor_limit`. `./lib/checks.js#floorLimit`
 * names the file directly. Either way the module must live inside the steps root: a definition
 * is configuration, and configuration that can reach `../../` could load any code on the host.
 * Nor may it live in a `node_modules` directory, even one inside the root: those hold the
 * host's dependencies, whose exports were never written to be steps (a definition could call
 * any function of any installed package with data of its choosing).
 */
import { constants } from 'node:fs';
import { access, realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SaffronError } from '../errors.js';

/** Extensions tried, in order, for a dotted module path. */
export const STEP_MODULE_EXTENSIONS = ['.js', '.mjs', '.ts'] as const;

/** Codes of {@link StepFunctionError}. */
export type StepFunctionErrorCode = 'FUNCTION_PATH_INVALID' | 'FUNCTION_NOT_FOUND';

/** A function path is malformed, escapes the steps root, or does not name a function. */
export class StepFunctionError extends SaffronError {
  override readonly name = 'StepFunctionError';
  /** The function path as written in the definition. */
  readonly functionPath: string;

  constructor(
    code: StepFunctionErrorCode,
    functionPath: string,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, { ...options, details: { functionPath, ...options.details } });
    this.functionPath = functionPath;
  }
}

/** A parsed function path. */
export interface FunctionPath {
  /**
   * Module path relative to the steps root: `payments/checks` (no extension) for the dotted
   * form, the file as written (`./lib/checks.js`) for the `#` form.
   */
  modulePath: string;
  /** Name of the module export. */
  exportName: string;
  /** Which form was used; a dotted path has its extension resolved at load. */
  form: 'dotted' | 'file';
}

/** A resolved step function. */
export interface ResolvedStepFunction {
  /** Absolute path of the module file. */
  file: string;
  exportName: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- step functions are user code of any signature
  fn: Function;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MODULE_SEGMENT = /^[A-Za-z_$][\w$-]*$/;
const FILE_EXTENSION = /\.(?:js|mjs|ts)$/;
/** The directory of installed packages, which no step module may come from. */
const DEPENDENCIES_DIR = 'node_modules';
const NOT_A_STEP_MODULE = `a step module may not come from a ${DEPENDENCIES_DIR} directory`;

/**
 * Parse `pkg.module.export` or `./path/module.js#export`. Throws {@link StepFunctionError}
 * (`FUNCTION_PATH_INVALID`) for any other shape, absolute paths and `..` segments.
 */
export function parseFunctionPath(functionPath: string): FunctionPath {
  const invalid = (why: string): StepFunctionError =>
    new StepFunctionError(
      'FUNCTION_PATH_INVALID',
      functionPath,
      `invalid function path '${functionPath}': ${why}`,
    );
  const hash = functionPath.indexOf('#');
  if (hash >= 0) {
    const modulePath = functionPath.slice(0, hash);
    const exportName = functionPath.slice(hash + 1);
    if (!IDENTIFIER.test(exportName)) throw invalid(`'${exportName}' is not an export name`);
    if (path.isAbsolute(modulePath) || /^[A-Za-z]:/.test(modulePath)) {
      throw invalid('the module must be relative to the steps root');
    }
    if (!FILE_EXTENSION.test(modulePath)) throw invalid('the module must end in .js, .mjs or .ts');
    if (modulePath.split(/[\\/]/).includes('..')) {
      throw invalid("'..' may not leave the steps root");
    }
    if (modulePath.split(/[\\/]/).includes(DEPENDENCIES_DIR)) throw invalid(NOT_A_STEP_MODULE);
    return { modulePath, exportName, form: 'file' };
  }
  const segments = functionPath.split('.');
  const exportName = segments.pop() ?? '';
  if (segments.length === 0) {
    throw invalid(
      "expected 'module.export' (e.g. payments.checks.floor_limit) or 'file.js#export'",
    );
  }
  if (!IDENTIFIER.test(exportName)) throw invalid(`'${exportName}' is not an export name`);
  const bad = segments.find((segment) => !MODULE_SEGMENT.test(segment));
  if (bad !== undefined) throw invalid(`'${bad}' is not a module name`);
  if (segments.includes(DEPENDENCIES_DIR)) throw invalid(NOT_A_STEP_MODULE);
  return { modulePath: segments.join('/'), exportName, form: 'dotted' };
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

function isInside(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

async function importModule(file: string): Promise<Record<string, unknown>> {
  if (file.endsWith('.ts')) {
    const { tsImport } = await import('tsx/esm/api');
    return (await tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>;
  }
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

/**
 * Resolve a function path under `stepsRoot` and import its module. Throws
 * {@link StepFunctionError}: `FUNCTION_PATH_INVALID` for a malformed path or one that leaves
 * the root (also through symlinks), `FUNCTION_NOT_FOUND` when the file or export is missing
 * (the message lists the exports the module does have) or the export is not a function.
 */
export async function resolveStepFunction(
  functionPath: string,
  stepsRoot: string,
): Promise<ResolvedStepFunction> {
  const parsed = parseFunctionPath(functionPath);
  const root = path.resolve(stepsRoot);
  const base = path.resolve(root, parsed.modulePath);
  const candidates =
    parsed.form === 'dotted' ? STEP_MODULE_EXTENSIONS.map((ext) => base + ext) : [base];
  for (const candidate of candidates) {
    if (!isInside(root, candidate)) {
      throw new StepFunctionError(
        'FUNCTION_PATH_INVALID',
        functionPath,
        `function path '${functionPath}' leaves the steps root ${root}`,
      );
    }
  }
  let file: string | undefined;
  for (const candidate of candidates) {
    if (await exists(candidate)) {
      file = candidate;
      break;
    }
  }
  if (file === undefined) {
    const tried = candidates.map((c) => path.relative(root, c)).join(', ');
    throw new StepFunctionError(
      'FUNCTION_NOT_FOUND',
      functionPath,
      `module for '${functionPath}' not found under ${root} (tried ${tried})`,
      { details: { tried: candidates } },
    );
  }
  const [realRoot, realFile] = await Promise.all([realpath(root), realpath(file)]);
  if (!isInside(realRoot, realFile)) {
    throw new StepFunctionError(
      'FUNCTION_PATH_INVALID',
      functionPath,
      `function path '${functionPath}' resolves outside the steps root ${root}`,
    );
  }
  // a symlink inside the root may still lead into installed packages
  if (path.relative(realRoot, realFile).split(path.sep).includes(DEPENDENCIES_DIR)) {
    throw new StepFunctionError(
      'FUNCTION_PATH_INVALID',
      functionPath,
      `function path '${functionPath}' resolves into ${DEPENDENCIES_DIR}: ${NOT_A_STEP_MODULE}`,
    );
  }
  let namespace: Record<string, unknown>;
  try {
    namespace = await importModule(file);
  } catch (cause) {
    throw new StepFunctionError(
      'FUNCTION_NOT_FOUND',
      functionPath,
      `module ${path.relative(root, file)} for '${functionPath}' failed to load: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
  }
  const fn = namespace[parsed.exportName];
  const relative = path.relative(root, file);
  if (fn === undefined) {
    const available = Object.keys(namespace)
      .filter((key) => key !== '__esModule')
      .sort();
    throw new StepFunctionError(
      'FUNCTION_NOT_FOUND',
      functionPath,
      `module ${relative} has no export '${parsed.exportName}' (exports: ${
        available.length === 0 ? 'none' : available.join(', ')
      })`,
      { details: { file, available } },
    );
  }
  if (typeof fn !== 'function') {
    throw new StepFunctionError(
      'FUNCTION_NOT_FOUND',
      functionPath,
      `export '${parsed.exportName}' of ${relative} is a ${fn === null ? 'null' : typeof fn}, not a function`,
      { details: { file } },
    );
  }
  return { file, exportName: parsed.exportName, fn };
}
