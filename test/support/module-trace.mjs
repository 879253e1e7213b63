// Loaded with `node --import` before the real `devicecloud` command: records every module the
// command loads (ESM and CommonJS, through Node's module hooks) and writes their URLs, one a line,
// to the file named by DEVICECLOUD_MODULE_TRACE when the process exits. Plain JavaScript: Node
// loads it as it is, before anything else (test/e2e/cli-startup.test.ts).
import fs from 'node:fs';
import { registerHooks } from 'node:module';

const loaded = new Set();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    loaded.add(resolved.url);
    return resolved;
  },
});
process.on('exit', () => fs.writeFileSync(process.env.DEVICECLOUD_MODULE_TRACE, [...loaded].join('\n')));
