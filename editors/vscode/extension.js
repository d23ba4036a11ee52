// Starts `blockkit lsp` for block.manifest.json files. Everything else (diagnostics, quick
// fixes, "fix all", hover, completion) comes from the server; this file only wires it up.
'use strict';

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function initializationOptions() {
  const settings = vscode.workspace.getConfiguration('blockkit');
  const options = {};
  for (const key of ['tier', 'appDomain', 'stage', 'config']) {
    const value = settings.get(key);
    if (typeof value === 'string' && value) options[key] = value;
  }
  for (const key of ['allowedOrigins', 'grantedScopes']) {
    const value = settings.get(key);
    if (Array.isArray(value) && value.length) options[key] = value;
  }
  return options;
}

async function start() {
  const [command, ...args] = vscode.workspace.getConfiguration('blockkit').get('command') || ['blockkit', 'lsp'];
  client = new LanguageClient('blockkit', 'blockkit', { command, args }, {
    documentSelector: [
      { scheme: 'file', language: 'json', pattern: '**/block.manifest.json' },
      { scheme: 'file', language: 'jsonc', pattern: '**/block.manifest.json' },
    ],
    initializationOptions: initializationOptions(),
    // A change to the config or to the block's code (which lint's project rules read) is
    // picked up at once (the server asks for the same watchers itself where a client lets it).
    synchronize: {
      fileEvents: [
        vscode.workspace.createFileSystemWatcher(
          '**/{blockkit.toml,pyproject.toml,package.json,package-lock.json,pnpm-lock.yaml,yarn.lock}'),
        vscode.workspace.createFileSystemWatcher('**/*.{cjs,cts,htm,html,js,jsx,mjs,mts,svelte,ts,tsx,vue}'),
      ],
    },
  });
  await client.start();
}

async function activate(context) {
  await start();
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration(async (event) => {
    if (event.affectsConfiguration('blockkit') && client) {
      await client.stop();
      await start();
    }
  }));
}

async function deactivate() {
  if (client) await client.stop();
}

module.exports = { activate, deactivate };
