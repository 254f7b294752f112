#!/usr/bin/env node
// Runs the TypeScript CLI directly (no build step), so `npx trainplan` works right after `npm ci`.
// The project's tsconfig is named explicitly: tsx would otherwise look in the current directory and
// miss the decorator settings when trainplan is run from elsewhere.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../cli/main.ts');
