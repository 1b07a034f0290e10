/**
 * `saffron/public-entry`: code outside a top-level folder imports it through its
 * `index.ts`, never a deeper path, so each folder's public surface is the list in its
 * index (docs/architecture.md#tiers) and its inside can move freely. Inside a folder,
 * relative imports are free. `allow` names the few deep imports kept on purpose (shipped
 * migrations are never edited, so they keep the path they were written with).
 */
import { forEachImport, projectPath, rootOf, topFolder } from './importSources.js';

/** @type {import('eslint').Rule.RuleModule} */
export const publicEntry = {
  meta: {
    type: 'problem',
    docs: { description: "Other top-level folders are imported through their 'index.ts'" },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          folders: { type: 'array', items: { type: 'string' } },
          exempt: { type: 'array', items: { type: 'string' } },
          allow: {
            type: 'array',
            items: {
              type: 'object',
              properties: { from: { type: 'string' }, to: { type: 'string' } },
              required: ['from', 'to'],
              additionalProperties: false,
            },
          },
        },
        required: ['folders'],
        additionalProperties: false,
      },
    ],
    messages: {
      deep: "Import '{{to}}' through '{{entry}}', not '{{specifier}}': it is inside another top-level folder.",
    },
  },
  create(context) {
    const root = rootOf(context);
    const options =
      /** @type {{ folders: string[], exempt?: string[], allow?: { from: string, to: string }[] }} */ (
        context.options[0]
      );
    const path = projectPath(root, context.filename);
    if (path === undefined) return {};
    const from = topFolder(path);
    if (options.exempt?.includes(from)) return {};
    return forEachImport(context, root, (entry) => {
      const to = entry.targetFolder;
      if (to === from || !options.folders.includes(to)) return;
      const entryPath = `${to}/index.ts`;
      if (entry.targetPath === entryPath) return;
      const allowed = options.allow?.some((a) => a.from === from && a.to === entry.targetPath);
      if (allowed) return;
      context.report({
        node: entry.node,
        messageId: 'deep',
        data: { to, entry: entryPath, specifier: entry.specifier },
      });
    });
  },
};
