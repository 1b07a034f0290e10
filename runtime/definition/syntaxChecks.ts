/**
 * Parse checks of the small languages embedded in a definition: DECISION conditions and LOOP
 * `while_condition` (expressions), `{{ ... }}` templates in HTTP configs, initial-data templates
 * and schedule names, and cron expressions.
 *
 * Each of these is otherwise parsed only when the step runs, so a stray bracket would fail a
 * live workflow halfway; at load it is a line number in an error message.
 */
import { Cron } from 'croner';
import { ExpressionSyntaxError, parseExpression } from '../expression/index.js';
import { listTemplateReferences, TemplateError } from '../template/index.js';
import type { StepKind } from './kinds.js';
import type { PathSegment } from './path.js';
import { errorIssue, warningIssue, type RawIssue } from './rawIssue.js';
import type { RawStep } from './rawSteps.js';
import { isRecord } from './values.js';

function checkExpression(source: unknown, path: PathSegment[], what: string): RawIssue[] {
  if (typeof source !== 'string') return [];
  try {
    parseExpression(source);
    return [];
  } catch (error) {
    if (!(error instanceof ExpressionSyntaxError)) throw error;
    const where = /column/i.test(error.message) ? '' : ` (column ${error.column})`;
    return [
      errorIssue(
        'EXPRESSION_SYNTAX',
        path,
        `invalid ${what} '${source}': ${error.message}${where}`,
      ),
    ];
  }
}

/**
 * Check every string leaf under `value` for template syntax. `persisted` templates become a
 * new workflow's stored state, and secrets are never stored: a `secrets.` reference there
 * would be refused when the step runs, so it is refused here, at its line.
 */
function checkTemplates(value: unknown, path: PathSegment[], persisted = false): RawIssue[] {
  if (typeof value === 'string') {
    try {
      const secrets = listTemplateReferences(value).filter(({ reference }) =>
        /^secrets\b/.test(reference),
      );
      if (!persisted || secrets.length === 0) return [];
      return [
        errorIssue(
          'SECRET_NOT_ALLOWED',
          path,
          `'{{ ${secrets[0]!.reference} }}': secrets cannot be used here — this template becomes the new workflow's stored state, and secrets are never stored`,
        ),
      ];
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return [errorIssue('TEMPLATE_SYNTAX', path, `invalid template: ${error.message}`)];
    }
  }
  if (Array.isArray(value)) {
    return value.flatMap((item: unknown, index) =>
      checkTemplates(item, [...path, index], persisted),
    );
  }
  if (isRecord(value)) {
    return Object.entries(value).flatMap(([key, item]) =>
      checkTemplates(item, [...path, key], persisted),
    );
  }
  return [];
}

function checkCron(expression: unknown, path: PathSegment[]): RawIssue[] {
  if (typeof expression !== 'string') return [];
  let job: Cron | undefined;
  try {
    job = new Cron(expression, { paused: true });
    if (job.nextRun() === null) {
      return [
        warningIssue('CRON_NEVER_FIRES', path, `cron expression '${expression}' never fires`),
      ];
    }
    return [];
  } catch (error) {
    const reason =
      error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    return [errorIssue('CRON_INVALID', path, `invalid cron expression '${expression}': ${reason}`)];
  } finally {
    job?.stop();
  }
}

/** Expression, template and cron checks for one raw step of a known kind. */
export function checkStepSyntax(step: RawStep, kind: StepKind): RawIssue[] {
  const { record, path } = step;
  switch (kind) {
    case 'DECISION': {
      const routes = record.routes;
      if (!Array.isArray(routes)) return [];
      return routes.flatMap((route: unknown, index) =>
        isRecord(route)
          ? checkExpression(route.condition, [...path, 'routes', index, 'condition'], 'condition')
          : [],
      );
    }
    case 'LOOP':
      return checkExpression(
        record.while_condition,
        [...path, 'while_condition'],
        'while_condition',
      );
    case 'HTTP':
      return checkTemplates(record.http_config, [...path, 'http_config']);
    case 'FIRE_AND_FORGET':
      return checkTemplates(record.initial_data_template, [...path, 'initial_data_template'], true);
    case 'CRON_SCHEDULE':
      return [
        ...checkTemplates(record.schedule_name, [...path, 'schedule_name'], true),
        ...checkCron(record.cron_expression, [...path, 'cron_expression']),
        ...checkTemplates(record.initial_data_template, [...path, 'initial_data_template'], true),
      ];
    case 'STANDARD':
    case 'ASYNC':
    case 'PARALLEL':
    case 'HUMAN_IN_LOOP':
    case 'AI_INFERENCE':
    case 'WASM':
      return [];
    default: {
      const unreachable: never = kind;
      throw new Error(`unhandled step kind ${String(unreachable)}`);
    }
  }
}
