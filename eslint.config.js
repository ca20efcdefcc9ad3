// Type-aware lint. The rules that matter most here: a dropped promise in settlement code loses
// money (no-floating-promises, no-misused-promises), and amounts never pass through Number().
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'data/**',
      '**/*.d.ts',
      'packages/facilitator/console/**',
      'docs/.vitepress/cache/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error', 'warn'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['**/test/**', 'bench/**', 'scripts/**', '**/cli.ts', '**/cli/**', '**/main.ts', '**/seller-cli.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/test/**', 'test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    files: [
      'eslint.config.js',
      '**/*.cjs',
      'scripts/**/*.mjs',
      'bench/**/*.mjs',
      'packages/*/bin/*.js',
      'docs/.vitepress/*.mjs',
    ],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { 'no-console': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['scripts/**/*.mjs', 'bench/**/*.mjs', 'packages/*/bin/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', performance: 'readonly', Buffer: 'readonly' },
    },
  },
);
