/** `saffron validate <workflow.yaml…>`: load definitions and report every problem. */
import { dirname, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  DefinitionError,
  formatDefinitionIssues,
  listSteps,
  loadDefinitionFile,
  type DefinitionIssue,
} from '../../runtime/index.js';
import { CliExit, type CliIo, printJson } from '../io.js';
import { versionSuffix } from '../versionSuffix.js';

interface ValidateOptions {
  steps?: string;
  resolve?: boolean;
  json?: boolean;
}

interface FileReport {
  file: string;
  ok: boolean;
  workflowType?: string;
  workflowVersion?: string | null;
  steps?: number;
  stepKinds?: Record<string, number>;
  errors: DefinitionIssue[];
  warnings: DefinitionIssue[];
}

async function validateFile(
  path: string,
  options: ValidateOptions,
  io: CliIo,
): Promise<FileReport> {
  const file = resolve(io.cwd, path);
  const shown = relative(io.cwd, file) || file;
  const stepsRoot = resolve(io.cwd, options.steps ?? io.env.SAFFRON_STEPS_DIR ?? dirname(file));
  try {
    const { definition, warnings } = await loadDefinitionFile(file, {
      stepsRoot,
      resolveFunctions: options.resolve !== false,
    });
    const stepKinds: Record<string, number> = {};
    const steps = listSteps(definition);
    for (const s of steps) stepKinds[s.type] = (stepKinds[s.type] ?? 0) + 1;
    return {
      file: shown,
      ok: true,
      workflowType: definition.workflow_type,
      workflowVersion: definition.workflow_version ?? null,
      steps: steps.length,
      stepKinds,
      errors: [],
      warnings,
    };
  } catch (error) {
    if (!(error instanceof DefinitionError)) throw error;
    return {
      file: shown,
      ok: false,
      errors: error.issues.filter((i) => i.severity === 'error'),
      warnings: error.issues.filter((i) => i.severity === 'warning'),
    };
  }
}

function printReport(io: CliIo, r: FileReport): void {
  if (r.ok) {
    const kinds = Object.entries(r.stepKinds ?? {})
      .map(([k, n]) => `${k}×${n}`)
      .join(', ');
    const version = versionSuffix(r.workflowVersion);
    const warn = r.warnings.length ? `, ${r.warnings.length} warning(s)` : '';
    io.stdout.write(
      `ok ${r.file}: ${r.workflowType}${version}, ${r.steps} steps (${kinds})${warn}\n`,
    );
  } else {
    io.stdout.write(
      `invalid ${r.file}: ${r.errors.length} error(s)${r.warnings.length ? `, ${r.warnings.length} warning(s)` : ''}\n`,
    );
  }
  const issues = [...r.errors, ...r.warnings];
  if (issues.length)
    io.stdout.write(`${formatDefinitionIssues(issues, r.file).replace(/^/gm, '  ')}\n`);
}

/** Register `validate`. */
export function registerValidateCommand(program: Command, io: CliIo): void {
  program
    .command('validate')
    .description('check workflow definitions; exit 1 and list every problem when one is invalid')
    .argument('<files...>', 'workflow YAML files')
    .option(
      '--steps <dir>',
      'root of step modules (default: SAFFRON_STEPS_DIR, else the YAML file’s folder)',
    )
    .option('--no-resolve', 'do not import step modules to check that functions exist')
    .option('--json', 'print the result as JSON')
    .action(async (files: string[], options: ValidateOptions) => {
      const reports: FileReport[] = [];
      for (const f of files) reports.push(await validateFile(f, options, io));
      if (options.json) printJson(io, { ok: reports.every((r) => r.ok), files: reports });
      else for (const r of reports) printReport(io, r);
      if (!reports.every((r) => r.ok)) throw new CliExit(1);
    });
}
