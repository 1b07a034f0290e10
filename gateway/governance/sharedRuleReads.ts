/**
 * Every `POST …/commands` reads the same few rows before its command is created: the
 * versions and policies of its command type (readCommandRules, one statement each). Under
 * load, reads asked for while others are under way share the next one: one statement for
 * the union of their types, each request given the rows of its own types. A request's read
 * still starts after the request was made, so it sees every version and policy committed
 * before — what a read of its own would see. A shared read that reached the policy limit
 * may have left out some of a request's policies: then each request reads alone.
 */
import { createBatchQueue } from '../../actors/index.js';
import { type CloudStore } from '../../runtime/index.js';
import {
  MAX_RULE_POLICIES,
  readCommandRules,
  type CommandRules,
} from './store/authorization/index.js';

/** Read the rules for some (canonical) command types. */
export type RuleReader = (commandTypes: readonly string[]) => Promise<CommandRules>;

interface Waiting {
  types: readonly string[];
  resolve: (rules: CommandRules) => void;
  reject: (error: unknown) => void;
}

/** The rules of `types` among `rules` (read for a superset of them). */
function rulesOf(rules: CommandRules, types: readonly string[]): CommandRules {
  const wanted = new Set(types);
  return {
    versions: rules.versions.filter((v) => wanted.has(v.commandType)),
    policies: rules.policies.filter((p) => p.commandType === null || wanted.has(p.commandType)),
  };
}

/** A reader over `store` that shares concurrent reads (see the module comment). */
export function createSharedRuleReads(store: CloudStore, maxBatch = 64): RuleReader {
  const readAlone = (w: Waiting) => readCommandRules(store, w.types).then(w.resolve, w.reject);
  const queue = createBatchQueue<Waiting>({
    maxBatch,
    maxInFlight: store.dialect === 'postgres' ? 2 : 1,
    async write(group) {
      if (group.length === 1) return readAlone(group[0]!);
      let rules: CommandRules;
      try {
        rules = await readCommandRules(store, [...new Set(group.flatMap((w) => w.types))]);
      } catch {
        // each alone, so that each gets its own failure
        await Promise.all(group.map(readAlone));
        return;
      }
      if (rules.policies.length >= MAX_RULE_POLICIES) await Promise.all(group.map(readAlone));
      else for (const w of group) w.resolve(rulesOf(rules, w.types));
    },
  });
  return (types) =>
    new Promise<CommandRules>((resolve, reject) => queue.push({ types, resolve, reject }));
}
