/**
 * `saffron/tier-direction`: the top-level folders depend one way
 * (`bin → gateway | edge → actors → runtime`, docs/architecture.md#tiers). A folder named in
 * `tiers` may import only itself and the folders listed for it, types included: an embedder
 * who compiles the engine must not need the control plane. Folders not named (tests,
 * benchmarks, scripts) may import anything.
 */
import { forEachImport, projectPath, rootOf, topFolder } from './importSources.js';

/** @type {import('eslint').Rule.RuleModule} */
export const tierDirection = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports between top-level folders follow the tier direction' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          tiers: {
            type: 'object',
            additionalProperties: { type: 'array', items: { type: 'string' } },
          },
        },
        required: ['tiers'],
        additionalProperties: false,
      },
    ],
    messages: {
      against:
        "'{{from}}' may not import '{{to}}' ({{specifier}}): {{from}} may import only {{allowed}}.",
    },
  },
  create(context) {
    const root = rootOf(context);
    const tiers = /** @type {{ tiers: Record<string, string[]> }} */ (context.options[0]).tiers;
    const path = projectPath(root, context.filename);
    if (path === undefined) return {};
    const from = topFolder(path);
    const allowed = tiers[from];
    if (!allowed) return {};
    return forEachImport(context, root, (entry) => {
      const to = entry.targetFolder;
      if (to === from || allowed.includes(to)) return;
      context.report({
        node: entry.node,
        messageId: 'against',
        data: {
          from,
          to,
          specifier: entry.specifier,
          allowed: allowed.length === 0 ? 'itself' : allowed.join(', '),
        },
      });
    });
  },
};
