import { afterAll } from 'vitest';
import plugin from '../../eslint/plugin.js';
import { typeScriptRuleTester, writeProject } from './fixtureProject.js';

const project = writeProject({
  'runtime/index.ts': 'export const core = 1;\n',
  'runtime/store/store.ts': 'export const store = 1;\n',
  'actors/index.ts': "import { core } from '../runtime/index.js';\nexport const actor = core;\n",
  'gateway/index.ts': 'export const gateway = 1;\n',
  'edge/index.ts': 'export const edge = 1;\n',
  'migrations/index.ts': 'export const migrations = [];\n',
  'bin/cli.ts': '',
  'test/helper.ts': 'export const helper = 1;\n',
});
afterAll(() => project.remove());

const tiers = {
  runtime: [],
  actors: ['runtime'],
  gateway: ['actors', 'runtime'],
  edge: ['actors', 'runtime'],
  migrations: ['runtime'],
  bin: ['gateway', 'edge', 'actors', 'runtime', 'migrations'],
};
const options = [{ root: project.root, tiers }];

typeScriptRuleTester().run('tier-direction', plugin.rules['tier-direction'], {
  valid: [
    {
      name: 'actors imports runtime',
      filename: project.path('actors/workflow.ts'),
      code: "import { core } from '../runtime/index.js';",
      options,
    },
    {
      name: 'gateway imports actors and runtime',
      filename: project.path('gateway/routes/api.ts'),
      code: "import { actor } from '../../actors/index.js';\nimport { core } from '../../runtime/index.js';",
      options,
    },
    {
      name: 'bin imports every tier',
      filename: project.path('bin/cli.ts'),
      code: [
        "import { gateway } from '../gateway/index.js';",
        "import { edge } from '../edge/index.js';",
        "import { migrations } from '../migrations/index.js';",
      ].join('\n'),
      options,
    },
    {
      name: 'inside a folder, relative imports are free',
      filename: project.path('runtime/engine/run.ts'),
      code: "import { store } from '../store/store.js';",
      options,
    },
    {
      name: 'tests import anything',
      filename: project.path('test/a.test.ts'),
      code: "import { gateway } from '../gateway/index.js';\nimport { store } from '../runtime/store/store.js';",
      options,
    },
    {
      name: 'packages are not folders',
      filename: project.path('runtime/x.ts'),
      code: "import { sql } from 'kysely';\nimport { join } from 'node:path';",
      options,
    },
  ],
  invalid: [
    {
      name: 'runtime imports actors',
      filename: project.path('runtime/engine/run.ts'),
      code: "import { actor } from '../../actors/index.js';",
      options,
      errors: [
        {
          messageId: 'against',
          data: {
            from: 'runtime',
            to: 'actors',
            specifier: '../../actors/index.js',
            allowed: 'itself',
          },
        },
      ],
    },
    {
      name: 'a type-only import against the direction fails too',
      filename: project.path('actors/host.ts'),
      code: "import type { gateway } from '../gateway/index.js';",
      options,
      errors: [
        {
          message:
            "'actors' may not import 'gateway' (../gateway/index.js): actors may import only runtime.",
        },
      ],
    },
    {
      name: 'gateway and edge never import each other',
      filename: project.path('edge/agent.ts'),
      code: "export { gateway } from '../gateway/index.js';",
      options,
      errors: [
        {
          message:
            "'edge' may not import 'gateway' (../gateway/index.js): edge may import only actors, runtime.",
        },
      ],
    },
    {
      name: 'a dynamic import counts',
      filename: project.path('gateway/lazy.ts'),
      code: "export const load = () => import('../edge/index.js');",
      options,
      errors: [
        {
          message:
            "'gateway' may not import 'edge' (../edge/index.js): gateway may import only actors, runtime.",
        },
      ],
    },
    {
      name: 'migrations are not imported by the engine',
      filename: project.path('runtime/store/migrate.ts'),
      code: "import { migrations } from '../../migrations/index.js';",
      options,
      errors: [
        {
          message:
            "'runtime' may not import 'migrations' (../../migrations/index.js): runtime may import only itself.",
        },
      ],
    },
    {
      name: 'production code does not import tests',
      filename: project.path('actors/x.ts'),
      code: "import { helper } from '../test/helper.js';",
      options,
      errors: [
        {
          message:
            "'actors' may not import 'test' (../test/helper.js): actors may import only runtime.",
        },
      ],
    },
  ],
});
