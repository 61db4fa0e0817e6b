// ESLint (flat config): JavaScript's recommended rules and typescript-eslint's, without type
// information so the whole repo lints in seconds.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.sst/**', '.data/**', '.bench/**', 'packages/tokens/.scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-control-regex': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  // Plain scripts run in Node or the browser; the TypeScript compiler checks names in .ts files.
  { files: ['**/*.js', '**/*.mjs'], rules: { 'no-undef': 'off' } },
  // SST's generated platform types are referenced the way SST documents.
  { files: ['sst.config.ts'], rules: { '@typescript-eslint/triple-slash-reference': 'off' } },
);
