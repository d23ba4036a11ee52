// @civitai/client 0.2.0-beta.86 is published as ES modules whose imports name folders and omit
// ".js" (`export * from './generated'`), as a bundler resolves them (the platform bundles it with
// Next.js). Node's own ES module resolution refuses both, so this resolve hook adds what a bundler
// would: "/index.js" for a folder, ".js" for a relative path without one. Nothing else changes.
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    if (error.code === 'ERR_UNSUPPORTED_DIR_IMPORT') {
      return nextResolve(`${specifier}/index.js`, context);
    }
    if (error.code === 'ERR_MODULE_NOT_FOUND' && specifier.startsWith('.') && !specifier.endsWith('.js')) {
      return nextResolve(`${specifier}.js`, context);
    }
    throw error;
  }
}
