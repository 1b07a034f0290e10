import { afterAll } from 'vitest';
import plugin from '../../eslint/plugin.js';
import { typeScriptRuleTester, writeProject } from './fixtureProject.js';

const project = writeProject({
  'runtime/index.ts': "export * from './store/index.js';\n",
  'runtime/store/index.ts': "export * from './tasks.js';\n",
  'runtime/store/tasks.ts': 'export const tasks = 1;\n',
  'runtime/store/migrate/migration.ts': 'export interface Migration {}\n',
  'actors/index.ts': 'export const actor = 1;\n',
  'actors/runtime/drive.ts': 'export const drive = 1;\n',
  'migrations/0001.ts': '',
});
afterAll(() => project.remove());

const options = [
  {
    root: project.root,
    folders: ['runtime', 'actors', 'gateway', 'edge', 'migrations', 'bin'],
    exempt: ['test', 'bench'],
    allow: [{ from: 'migrations', to: 'runtime/store/migrate/migration.ts' }],
  },
];

typeScriptRuleTester().run('public-entry', plugin.rules['public-entry'], {
  valid: [
    {
      name: "another folder through its 'index.ts'",
      filename: project.path('gateway/fleet/driver.ts'),
      code: "import { tasks } from '../../runtime/index.js';",
      options,
    },
    {
      name: 'deep paths inside the own folder',
      filename: project.path('actors/runtime/tasks.ts'),
      code: "import { drive } from './drive.js';\nimport { actor } from '../index.js';",
      options,
    },
    {
      name: 'a subfolder named like another top-level folder is still inside',
      filename: project.path('actors/runtime/x.ts'),
      code: "import { drive } from '../runtime/drive.js';",
      options,
    },
    {
      name: 'a listed exception',
      filename: project.path('migrations/0001.ts'),
      code: "import type { Migration } from '../runtime/store/migrate/migration.js';",
      options,
    },
    {
      name: 'tests may reach inside',
      filename: project.path('test/store/tasks.test.ts'),
      code: "import { tasks } from '../../runtime/store/tasks.js';",
      options,
    },
  ],
  invalid: [
    {
      name: 'a deep path into another folder',
      filename: project.path('gateway/fleet/driver.ts'),
      code: "import { tasks } from '../../runtime/store/tasks.js';",
      options,
      errors: [
        {
          messageId: 'deep',
          data: {
            to: 'runtime',
            entry: 'runtime/index.ts',
            specifier: '../../runtime/store/tasks.js',
          },
        },
      ],
    },
    {
      name: "a nested 'index' is still deep",
      filename: project.path('bin/commands/db.ts'),
      code: "import { tasks } from '../../runtime/store/index.js';",
      options,
      errors: [{ messageId: 'deep' }],
    },
    {
      name: 'type-only deep imports fail too',
      filename: project.path('edge/agent.ts'),
      code: "import type { drive } from '../actors/runtime/drive.js';",
      options,
      errors: [
        {
          message:
            "Import 'actors' through 'actors/index.ts', not '../actors/runtime/drive.js': it is inside another top-level folder.",
        },
      ],
    },
    {
      name: 'a re-export through a deep path',
      filename: project.path('gateway/index.ts'),
      code: "export { tasks } from '../runtime/store/tasks.js';",
      options,
      errors: [{ messageId: 'deep' }],
    },
    {
      name: 'an exception holds only for the folder it names',
      filename: project.path('bin/migrate.ts'),
      code: "import type { Migration } from '../runtime/store/migrate/migration.js';",
      options,
      errors: [{ messageId: 'deep' }],
    },
  ],
});
