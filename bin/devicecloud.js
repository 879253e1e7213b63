#!/usr/bin/env node
// Runs the TypeScript sources directly: tsx registers its loader, then main.ts takes over.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
