import type { ESLint, Rule } from 'eslint';

/** Saffron's own lint rules (see plugin.js). */
declare const plugin: ESLint.Plugin & {
  rules: {
    'tier-direction': Rule.RuleModule;
    'public-entry': Rule.RuleModule;
    'no-import-cycles': Rule.RuleModule;
  };
};
export default plugin;
