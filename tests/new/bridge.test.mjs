// The bridge's protocol, exercised in Node with a fake window and host.
// Run by test_bridge.py (node --test); BRIDGE_PATH names templates/_shared/bridge.js.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

const HOST = 'https://host.example';
const { connect, BRIDGE_ID } = await import(pathToFileURL(process.env.BRIDGE_PATH).href);

function fakeWorld({ hash = '', height = 321 } = {}) {
  const sent = [];
  const listeners = [];
  const observers = [];
  const parent = { postMessage: (data, targetOrigin) => sent.push({ ...data, targetOrigin }) };
  const root = { getBoundingClientRect: () => ({ height: world.height }) };
  const world = { sent, parent, observers, height };
  globalThis.window = {
    parent,
    location: { hash },
    addEventListener: (type, fn) => listeners.push(fn),
    removeEventListener: (type, fn) => listeners.splice(listeners.indexOf(fn), 1),
    matchMedia: () => ({ matches: false }),
  };
  globalThis.document = {
    documentElement: { dataset: {}, style: {}, scrollHeight: height },
    body: {},
    getElementById: (id) => (id === 'root' ? root : null),
  };
  globalThis.ResizeObserver = class {
    constructor(callback) { this.callback = callback; observers.push(this); }
    observe() {}
    disconnect() {}
  };
  globalThis.requestAnimationFrame = (fn) => fn();
  world.deliver = (type, payload, { source = parent, origin = HOST } = {}) =>
    listeners.forEach((fn) => fn({ source, origin, data: { type, payload } }));
  world.types = () => sent.map((m) => m.type);
  return world;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function init(slotId = 'app.page', extra = {}) {
  return {
    blockInstanceId: 'bi_1', blockId: 'demo-block', appId: 'app_1',
    token: { raw: 'jwt-1', scopes: [], expiresAt: new Date(Date.now() + 15 * 60000).toISOString(), kind: 'block' },
    context: { slotId }, settings: { publisherSettings: {}, userSettings: {} },
    viewer: null, theme: 'light', renderMode: 'iframe', ...extra,
  };
}

test('reads the fragment hint before BLOCK_INIT and says hello', () => {
  const world = fakeWorld({ hash: '#civitai-block=v1&theme=dark&renderMode=iframe&blockInstanceId=bi_1' });
  connect();
  assert.equal(document.documentElement.dataset.theme, 'dark');
  assert.deepEqual(world.sent, [{ type: 'BLOCK_HELLO', payload: { bridge: BRIDGE_ID }, targetOrigin: '*' }]);
});

test('answers BLOCK_INIT with BLOCK_READY {height} after onInit, and answers every repeat', async () => {
  const world = fakeWorld();
  let calls = 0;
  connect({ onInit: () => { calls += 1; world.height = 480; } });
  world.deliver('BLOCK_INIT', init());
  world.deliver('BLOCK_INIT', init()); // re-posted while starting: the answer follows
  await tick();
  assert.equal(calls, 1);
  assert.deepEqual(world.sent.at(-1), { type: 'BLOCK_READY', payload: { height: 480 }, targetOrigin: HOST });
  world.deliver('BLOCK_INIT', init()); // our answer was lost: answer again
  assert.equal(calls, 1);
  assert.deepEqual(world.types(), ['BLOCK_HELLO', 'BLOCK_READY', 'BLOCK_READY']);
  assert.equal(document.documentElement.dataset.theme, 'light');
});

test('ignores messages from other frames and, once pinned, other origins', async () => {
  const world = fakeWorld();
  const bridge = connect();
  world.deliver('BLOCK_INIT', init(), { source: {} });
  await tick();
  assert.equal(bridge.getState().init, null);
  world.deliver('BLOCK_INIT', init());
  await tick();
  world.deliver('THEME_CHANGE', { theme: 'dark' }, { origin: 'https://evil.example' });
  assert.equal(bridge.getState().theme, 'light');
});

test('follows TOKEN_REFRESH, THEME_CHANGE, ROUTE_CHANGED, SUSPEND and RESUME', async () => {
  const world = fakeWorld();
  const bridge = connect();
  let notified = 0;
  bridge.subscribe(() => { notified += 1; });
  world.deliver('BLOCK_INIT', init());
  await tick();
  world.deliver('TOKEN_REFRESH', { token: { raw: 'jwt-2', scopes: [], expiresAt: init().token.expiresAt } });
  world.deliver('THEME_CHANGE', { theme: 'dark' });
  world.deliver('ROUTE_CHANGED', { subPath: '/settings' });
  world.deliver('SUSPEND', {});
  const state = bridge.getState();
  assert.equal(state.token.raw, 'jwt-2');
  assert.equal(state.theme, 'dark');
  assert.equal(document.documentElement.dataset.theme, 'dark');
  assert.equal(state.subPath, '/settings');
  assert.equal(state.suspended, true);
  world.deliver('RESUME', {});
  assert.equal(bridge.getState().suspended, false);
  assert.ok(notified >= 6);
});

test('REQUEST_TOKEN carries a requestId and resolves only on the matching reply', async () => {
  const world = fakeWorld();
  const bridge = connect();
  world.deliver('BLOCK_INIT', init());
  await tick();
  const pending = bridge.requestToken();
  const request = world.sent.at(-1);
  assert.equal(request.type, 'REQUEST_TOKEN');
  assert.equal(request.targetOrigin, HOST);
  assert.match(request.payload.requestId, /^blockkit-bridge\/1:/);
  const fresh = { raw: 'jwt-3', scopes: [], expiresAt: init().token.expiresAt };
  world.deliver('TOKEN_REFRESH_RESPONSE', { requestId: 'someone-else', token: { raw: 'wrong' } });
  world.deliver('TOKEN_REFRESH_RESPONSE', { requestId: request.payload.requestId, token: fresh });
  assert.equal((await pending).raw, 'jwt-3');
  assert.equal(bridge.getState().token.raw, 'jwt-3');
  // A second request gets a different id.
  bridge.requestToken(5).catch(() => {});
  assert.notEqual(world.sent.at(-1).payload.requestId, request.payload.requestId);
});

test('a request the host never answers fails after its timeout', async () => {
  const world = fakeWorld();
  const bridge = connect();
  world.deliver('BLOCK_INIT', init());
  await tick();
  await assert.rejects(bridge.requestToken(20), /did not answer REQUEST_TOKEN within 20 ms/);
});

test('getToken asks the host only when the token is about to expire', async () => {
  const world = fakeWorld();
  const bridge = connect();
  world.deliver('BLOCK_INIT', init('app.page', { token: { raw: 'old', scopes: [], expiresAt: new Date(Date.now() + 1000).toISOString() } }));
  await tick();
  const pending = bridge.getToken();
  const request = world.sent.at(-1);
  assert.equal(request.type, 'REQUEST_TOKEN');
  world.deliver('TOKEN_REFRESH_RESPONSE', { requestId: request.payload.requestId, token: init().token });
  assert.equal((await pending).raw, 'jwt-1');
  const count = world.sent.length;
  assert.equal((await bridge.getToken()).raw, 'jwt-1');
  assert.equal(world.sent.length, count);
});

test('never sends RESIZE_IFRAME on the page', async () => {
  const world = fakeWorld();
  connect();
  world.deliver('BLOCK_INIT', init('app.page'));
  await tick();
  assert.equal(world.observers.length, 0);
  assert.ok(!world.types().includes('RESIZE_IFRAME'));
});

test('sends RESIZE_IFRAME on a model slot when the content height changes', async () => {
  const world = fakeWorld();
  connect();
  world.deliver('BLOCK_INIT', init('model.sidebar_top'));
  await tick();
  assert.equal(world.observers.length, 1);
  world.height = 200;
  world.observers[0].callback();
  world.observers[0].callback(); // same height: nothing new to say
  world.height = 260;
  world.observers[0].callback();
  const resizes = world.sent.filter((m) => m.type === 'RESIZE_IFRAME').map((m) => m.payload.height);
  assert.deepEqual(resizes, [200, 260]);
});

test('a failing onInit reports a fatal BLOCK_ERROR instead of BLOCK_READY', async () => {
  const world = fakeWorld();
  const original = console.error;
  console.error = () => {};
  try {
    connect({ onInit: () => { throw new Error('boom'); } });
    world.deliver('BLOCK_INIT', init());
    await tick();
  } finally {
    console.error = original;
  }
  assert.deepEqual(world.sent.at(-1), { type: 'BLOCK_ERROR', payload: { message: 'boom', fatal: true }, targetOrigin: HOST });
  assert.ok(!world.types().includes('BLOCK_READY'));
});

test('opened in a plain tab, it renders a preview and posts nothing', async () => {
  const world = fakeWorld();
  window.parent = window;
  let seen = null;
  connect({ slot: 'model.below_images', onInit: (value) => { seen = value; } });
  await tick();
  assert.equal(seen.standalone, true);
  assert.equal(seen.context.slotId, 'model.below_images');
  assert.equal(world.sent.length, 0);
});
