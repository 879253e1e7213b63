// Imports the modules named by the arguments (paths) and prints, as JSON, what that loaded: the files and
// packages it resolved (where node:module has registerHooks: Node 22.15+, 23.5+) and the CommonJS
// files in require's cache (every Node). Run with `node --import tsx` for TypeScript sources.
import module from 'node:module';
import { pathToFileURL } from 'node:url';

const resolved = new Set();
module.registerHooks?.({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    resolved.add(result.url);
    return result;
  },
});
for (const file of process.argv.slice(2)) await import(pathToFileURL(file).href);
const commonJs = Object.keys(module.createRequire(import.meta.url).cache).map((file) => pathToFileURL(file).href);
process.stdout.write(
  JSON.stringify({ hooked: module.registerHooks !== undefined, urls: [...new Set([...resolved, ...commonJs])] }),
);
