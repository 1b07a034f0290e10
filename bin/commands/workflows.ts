/**
 * Commands on stored workflows: `resume`, `list`, `show`, `retry`, `cancel`, `pause`. A
 * stored workflow carries its own definition snapshot, so none of them needs its YAML; the
 * step functions must still be importable (`--steps`), and types it may spawn registered
 * (`--workflows`).
 */
import { type Command, InvalidArgumentError } from 'commander';
import type { Runtime } from '../../actors/index.js';
import { isWorkflowStatus, WORKFLOW_STATUSES, type WorkflowStatus } from '../../runtime/index.js';
import {
  type EngineOptions,
  engineOptions,
  stepsRootOf,
  withRuntime,
  workflowsRegistry,
} from '../engineCommand.js';
import { checkStepFunctions } from '../definitions.js';
import { engineAction } from '../engineAction.js';
import type { CliIo } from '../io.js';
import { parseJsonObject } from '../jsonOption.js';
import { printWorkflow, printWorkflowTable, printWorkflowWithAudit } from '../printWorkflow.js';
import { reportSettled } from '../settled.js';

interface InputOptions extends EngineOptions {
  input?: string;
}

interface RetryOptions extends InputOptions {
  fromStep?: string;
}

interface ListOptions extends EngineOptions {
  status?: WorkflowStatus;
  type?: string;
  limit?: number;
}

interface CancelOptions extends EngineOptions {
  reason?: string;
}

const RETRYABLE: readonly WorkflowStatus[] = ['FAILED', 'FAILED_ROLLED_BACK', 'CANCELLED'];

function parseStatus(value: string): WorkflowStatus {
  const status = value.toUpperCase();
  if (!isWorkflowStatus(status))
    throw new InvalidArgumentError(`expected one of ${WORKFLOW_STATUSES.join(', ')}`);
  return status;
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 1000)
    throw new InvalidArgumentError('expected a whole number from 1 to 1000');
  return n;
}

/** Build the runtime for a command on stored workflows and run `fn` with it. */
async function onRuntime(
  options: EngineOptions,
  io: CliIo,
  fn: (runtime: Runtime, stepsRoot: string) => Promise<void>,
): Promise<void> {
  const stepsRoot = stepsRootOf(options, io);
  const registry = await workflowsRegistry(options, io, stepsRoot);
  await withRuntime(options, io, { stepsRoot, registry }, (runtime) => fn(runtime, stepsRoot));
}

async function resume(id: string, options: InputOptions, io: CliIo): Promise<void> {
  const input = options.input === undefined ? {} : parseJsonObject(options.input, '--input');
  await onRuntime(options, io, async (runtime, stepsRoot) => {
    const before = await runtime.get(id);
    // other statuses: let the runtime refuse with WORKFLOW_NOT_WAITING
    if (before.status === 'WAITING_HUMAN_INPUT' || before.status === 'PAUSED')
      await checkStepFunctions(before, stepsRoot);
    let record = await runtime.resume(id, input);
    // an operator pause over a human wait: unpausing returns it to waiting, and the input
    // given with this resume is meant for that wait
    if (
      before.status === 'PAUSED' &&
      record.status === 'WAITING_HUMAN_INPUT' &&
      options.input !== undefined
    )
      record = await runtime.resume(id, input);
    reportSettled(io, await runtime.runUntilSettled(record.id), options.json === true);
  });
}

async function retry(id: string, options: RetryOptions, io: CliIo): Promise<void> {
  const input = options.input === undefined ? undefined : parseJsonObject(options.input, '--input');
  await onRuntime(options, io, async (runtime, stepsRoot) => {
    const before = await runtime.get(id);
    // other statuses: let the runtime refuse with WORKFLOW_NOT_RETRYABLE
    if (RETRYABLE.includes(before.status)) await checkStepFunctions(before, stepsRoot);
    await runtime.retry(id, {
      ...(options.fromStep === undefined ? {} : { fromStep: options.fromStep }),
      ...(input === undefined ? {} : { input }),
    });
    reportSettled(io, await runtime.runUntilSettled(id), options.json === true);
  });
}

async function list(options: ListOptions, io: CliIo): Promise<void> {
  await onRuntime(options, io, async (runtime) => {
    const records = await runtime.list({
      ...(options.status ? { status: options.status } : {}),
      ...(options.type ? { workflowType: options.type } : {}),
      ...(options.limit ? { limit: options.limit } : {}),
    });
    printWorkflowTable(io, records, options.json === true);
  });
}

async function show(id: string, options: EngineOptions, io: CliIo): Promise<void> {
  await onRuntime(options, io, async (runtime) => {
    const record = await runtime.get(id);
    printWorkflowWithAudit(io, record, await runtime.audit(id), options.json === true);
  });
}

async function cancel(id: string, options: CancelOptions, io: CliIo): Promise<void> {
  await onRuntime(options, io, async (runtime) => {
    const reason = options.reason === undefined ? {} : { reason: options.reason };
    printWorkflow(io, await runtime.cancel(id, reason), options.json === true);
  });
}

async function pause(id: string, options: EngineOptions, io: CliIo): Promise<void> {
  await onRuntime(options, io, async (runtime) => {
    printWorkflow(io, await runtime.pause(id), options.json === true);
  });
}

/** Register the commands on stored workflows. */
export function registerWorkflowCommands(program: Command, io: CliIo): void {
  engineOptions(
    program
      .command('resume')
      .description(
        'give input to a workflow waiting for a human (or undo a pause) and drive it until it is no longer ACTIVE',
      )
      .argument('<id>', 'workflow id')
      .option('--input <json>', 'input as a JSON object (default {})'),
  ).action(engineAction(io, (id: string, options: InputOptions) => resume(id, options, io)));

  engineOptions(
    program
      .command('list')
      .description('list workflows, newest first')
      .option('--status <status>', 'only workflows with this status', parseStatus)
      .option('--type <workflow_type>', 'only workflows of this type')
      .option('--limit <n>', 'at most this many (default 100, at most 1000)', parseLimit),
  ).action(engineAction(io, (options: ListOptions) => list(options, io)));

  engineOptions(
    program
      .command('show')
      .description('show a workflow with its state and audit trail')
      .argument('<id>', 'workflow id'),
  ).action(engineAction(io, (id: string, options: EngineOptions) => show(id, options, io)));

  engineOptions(
    program
      .command('retry')
      .description(
        'restart a FAILED, FAILED_ROLLED_BACK or CANCELLED workflow and drive it until it is no longer ACTIVE',
      )
      .argument('<id>', 'workflow id')
      .option('--from-step <name>', 'top-level step to restart at (default: the step that failed)')
      .option('--input <json>', 'JSON object merged into the state before restarting'),
  ).action(engineAction(io, (id: string, options: RetryOptions) => retry(id, options, io)));

  engineOptions(
    program
      .command('cancel')
      .description('cancel a workflow that has not ended')
      .argument('<id>', 'workflow id')
      .option('--reason <text>', 'why, recorded in the audit trail'),
  ).action(engineAction(io, (id: string, options: CancelOptions) => cancel(id, options, io)));

  engineOptions(
    program
      .command('pause')
      .description('pause a workflow: nothing runs until `saffron resume`')
      .argument('<id>', 'workflow id'),
  ).action(engineAction(io, (id: string, options: EngineOptions) => pause(id, options, io)));
}
