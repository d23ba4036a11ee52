// `node --import ./register_resolution.mjs script.mjs`: installs bundler_resolution.mjs's hook.
import { register } from 'node:module';

register('./bundler_resolution.mjs', import.meta.url);
