import { afterAll } from 'vitest';
import plugin from '../../eslint/plugin.js';
import { typeScriptRuleTester, writeProject } from './fixtureProject.js';

const project = writeProject({
  // a three-module cycle; the import that closes it is the one back to its first file
  'actors/runtime/drive.ts': "import { kick } from './tasks.js';\nexport const drive = kick;\n",
  'actors/runtime/tasks.ts':
    "import { settle } from './taskOutcomes.js';\nexport const kick = settle;\n",
  'actors/runtime/taskOutcomes.ts':
    "import { drive } from './drive.js';\nexport const settle = () => drive;\n",
  // a two-module cycle across folders of one tier
  'runtime/store/tasks/finishTasks.ts':
    "import { statement } from '../postgres/finishTasksPostgres.js';\nexport const finish = statement;\n",
  'runtime/store/postgres/finishTasksPostgres.ts':
    "import { finish } from '../tasks/finishTasks.js';\nexport const statement = () => finish;\n",
  // the same shape broken: the shared piece moved to a module both import
  'runtime/store/tasks/groups.ts': 'export const groupKey = (a: string) => a;\n',
  'runtime/store/tasks/finish.ts':
    "import { groupKey } from './groups.js';\nimport { run } from '../postgres/finishPostgres.js';\nexport const finish = () => run(groupKey('a'));\n",
  'runtime/store/postgres/finishPostgres.ts':
    "import { groupKey } from '../tasks/groups.js';\nexport const run = (k: string) => groupKey(k);\n",
  // type-only and dynamic imports back do not make a cycle
  'edge/a.ts': "import type { B } from './b.js';\nexport const a = 1;\nexport type A = B;\n",
  'edge/b.ts': "import { a } from './a.js';\nexport type B = typeof a;\n",
  'edge/c.ts':
    "import { d } from './d.js';\nexport const c = () => d;\nexport const load = () => import('./d.js');\n",
  'edge/d.ts': "export const d = 1;\nexport const load = () => import('./c.js');\n",
  // a module importing itself
  'gateway/self.ts': "import { self } from './self.js';\nexport const self = 1;\nvoid self;\n",
});
afterAll(() => project.remove());

const options = [{ root: project.root }];
const at = (rel: string) => ({ filename: project.path(rel), code: project.code(rel), options });

typeScriptRuleTester().run('no-import-cycles', plugin.rules['no-import-cycles'], {
  valid: [
    { name: 'a cycle is reported once, not in its other files', ...at('actors/runtime/drive.ts') },
    { name: 'the middle of a cycle is not reported', ...at('actors/runtime/tasks.ts') },
    {
      name: 'the first file of a two-module cycle',
      ...at('runtime/store/postgres/finishTasksPostgres.ts'),
    },
    { name: 'shared piece in a third module', ...at('runtime/store/tasks/finish.ts') },
    { name: 'the shared piece', ...at('runtime/store/postgres/finishPostgres.ts') },
    { name: 'a type-only import back', ...at('edge/a.ts') },
    { name: 'the other side of it', ...at('edge/b.ts') },
    { name: 'a dynamic import back', ...at('edge/c.ts') },
    { name: 'the other side of the dynamic one', ...at('edge/d.ts') },
  ],
  invalid: [
    {
      name: 'three modules, reported at the import that closes the cycle',
      ...at('actors/runtime/taskOutcomes.ts'),
      errors: [
        {
          messageId: 'cycle',
          data: {
            cycle:
              'actors/runtime/drive.ts → actors/runtime/tasks.ts → actors/runtime/taskOutcomes.ts → actors/runtime/drive.ts',
          },
          line: 1,
        },
      ],
    },
    {
      name: 'two modules',
      ...at('runtime/store/tasks/finishTasks.ts'),
      errors: [
        {
          messageId: 'cycle',
          data: {
            cycle:
              'runtime/store/postgres/finishTasksPostgres.ts → runtime/store/tasks/finishTasks.ts → runtime/store/postgres/finishTasksPostgres.ts',
          },
        },
      ],
    },
    {
      name: 'a module importing itself',
      ...at('gateway/self.ts'),
      errors: [{ messageId: 'cycle', data: { cycle: 'gateway/self.ts → gateway/self.ts' } }],
    },
  ],
});
