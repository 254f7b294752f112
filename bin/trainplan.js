#!/usr/bin/env node
// Runs the TypeScript CLI directly (no build step), so `npx trainplan` works right after `npm ci`.
import { register } from 'tsx/esm/api';
register();
await import('../cli/main.ts');
