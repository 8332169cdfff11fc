import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', 'docs/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    // The protocol core takes plain objects and returns plain results: no HTTP
    // framework, no database driver, no reaching into the adapters (STYLE.md).
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['fastify', 'fastify/*', '@fastify/*', 'express', 'koa', 'hono'], message: 'The protocol core must not import an HTTP framework.' },
          { group: ['kysely', 'kysely/*', 'pg', 'pg-*', 'better-sqlite3', 'ioredis', 'redis'], message: 'The protocol core must not import a database driver.' },
          { group: ['**/http/**', '**/store/**', '**/infra/**', '**/cli/**', '**/server', '**/server.js', '**/gatehouse.js'], message: 'The protocol core must not depend on the adapters around it.' },
        ],
      }],
    },
  },
  {
    // `key in object` is true for inherited names too ("constructor", "toString"): a key that came
    // from a request would reach Object.prototype (issue 24, finding 9). A key computed at run time is
    // looked up in a Map or a Set, or with Object.hasOwn; `'name' in x` with the name written in the
    // source (a type narrowing) stays. test/security/prototype-keys.test.ts sends the names.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: "BinaryExpression[operator='in'][left.type!='Literal']",
        message: 'The in operator sees inherited names (constructor, __proto__): use a Map, a Set or Object.hasOwn.',
      }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'examples/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
