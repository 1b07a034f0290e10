/**
 * `saffron/no-import-cycles`: no cycle of run-time imports. In a cycle, one module runs
 * before a module it needs has finished evaluating, and a `const` it reads at load time is
 * still in its temporal dead zone — an error that depends on which file was imported
 * first. Type-only imports are erased and dynamic `import()` runs later, so neither counts.
 * Each cycle is reported once, at the import that closes it (see ModuleGraph.cycleThrough).
 */
import { relative, sep } from 'node:path';
import { graphFor } from '../moduleGraph.js';
import { forEachImport, rootOf } from './importSources.js';

/** @type {import('eslint').Rule.RuleModule} */
export const noImportCycles = {
  meta: {
    type: 'problem',
    docs: { description: 'Run-time imports form no cycle' },
    schema: [
      {
        type: 'object',
        properties: { root: { type: 'string' } },
        additionalProperties: false,
      },
    ],
    messages: {
      cycle: 'This import closes a run-time import cycle: {{cycle}}.',
    },
  },
  create(context) {
    const root = rootOf(context);
    const graph = graphFor(root);
    const cycle = graph.cycleThrough(context.filename);
    if (!cycle || cycle.length < 2) return {};
    const closing = cycle[cycle.length - 2];
    const closed = cycle[cycle.length - 1];
    if (closing !== context.filename) return {};
    const name = (/** @type {string} */ file) => relative(root, file).split(sep).join('/');
    let reported = false;
    return forEachImport(context, root, (entry) => {
      if (reported || entry.typeOnly || entry.dynamic || entry.target !== closed) return;
      reported = true;
      context.report({
        node: entry.node,
        messageId: 'cycle',
        data: { cycle: cycle.map(name).join(' → ') },
      });
    });
  },
};
