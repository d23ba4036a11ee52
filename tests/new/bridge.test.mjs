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

test('answers BLOCK_INIT with BLOCK_READY {height} once, and again only when the host missed it', async () => {
  const world = fakeWorld();
  let calls = 0;
  connect({ onInit: () => { calls += 1; world.height = 480; } });
  world.deliver('BLOCK_INIT', init());
  world.deliver('BLOCK_INIT', init()); // re-posted while starting: the answer follows
  await tick();
  assert.equal(calls, 1);
  assert.deepEqual(world.sent.at(-1), { type: 'BLOCK_READY', payload: { height: 480 }, targetOrigin: HOST });
  world.deliver('BLOCK_INIT', init()); // a re-post that crossed our READY: no second READY (issue 37, row 5)
  assert.deepEqual(world.types(), ['BLOCK_HELLO', 'BLOCK_READY']);
  const realNow = Date.now;
  Date.now = () => realNow() + 1500; // the host still re-posts 1.5 s later: it missed our READY
  try {
    world.deliver('BLOCK_INIT', init());
  } finally {
    Date.now = realNow;
  }
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

// --- the request helpers -------------------------------------------------------------

const { BridgeError, PLATFORM_API_BASE, FINISHED_STATUSES } = await import(pathToFileURL(process.env.BRIDGE_PATH).href);

// Answer the newest request of `type` with `payload` (the reply echoes its requestId).
function answer(world, type, replyType, payload) {
  const request = world.sent.filter((m) => m.type === type).at(-1);
  assert.ok(request, `no ${type} was sent`);
  world.deliver(replyType, { requestId: request.payload.requestId, ...payload });
  return request;
}

async function started(slotId = 'app.page', extra = {}) {
  const world = fakeWorld();
  const bridge = connect();
  world.deliver('BLOCK_INIT', init(slotId, extra));
  await tick();
  return { world, bridge };
}

test('getViewer sends GET_VIEWER {requestId} on the page and resolves VIEWER_RESULT.viewer', async () => {
  const viewer = { id: 7, username: 'ada', status: 'active', buzzBudget: 50 };
  const { world, bridge } = await started('app.page', { viewer: { id: 7, username: 'ada', signedIn: true }, token: GRANTED });
  const pending = bridge.getViewer();
  await tick();
  const request = answer(world, 'GET_VIEWER', 'VIEWER_RESULT', { viewer });
  assert.deepEqual(Object.keys(request.payload), ['requestId']);
  assert.equal(request.targetOrigin, HOST);
  assert.deepEqual(await pending, viewer);
  // Without user:read:self the platform answers an error: the block learns why.
  const refused = bridge.getViewer();
  await tick();
  answer(world, 'GET_VIEWER', 'VIEWER_RESULT', { error: 'block lacks user:read:self scope' });
  await assert.rejects(refused, (error) => error instanceof BridgeError && error.code === 'REFUSED'
    && /block lacks user:read:self scope/.test(error.message));
  const banned = bridge.getViewer();
  await tick();
  answer(world, 'GET_VIEWER', 'VIEWER_RESULT', { error: 'banned' });
  await assert.rejects(banned, { code: 'banned' });
});

test('a signed-out viewer is null: the platform\'s error for it, or any error while BLOCK_INIT.viewer is null', async () => {
  let { world, bridge } = await started('app.page', { viewer: { id: 7, username: 'ada', signedIn: true }, token: GRANTED });
  let pending = bridge.getViewer();
  await tick();
  answer(world, 'GET_VIEWER', 'VIEWER_RESULT', { error: 'viewer read requires an authenticated viewer' });
  assert.equal(await pending, null);
  ({ world, bridge } = await started('app.page', { viewer: null }));
  pending = bridge.getViewer();
  await tick();
  answer(world, 'GET_VIEWER', 'VIEWER_RESULT', { error: 'block lacks user:read:self scope' });
  assert.equal(await pending, null);
});

// A token that carries user:read:self: the viewer granted it (a first visit's token lacks it).
const GRANTED = { raw: 'jwt-1', scopes: ['user:read:self'], expiresAt: new Date(Date.now() + 15 * 60000).toISOString() };

test('before the viewer grants user:read:self, getViewer answers from BLOCK_INIT; requestConsent asks, with no reply', async () => {
  const viewer = { id: 7, username: 'ada', signedIn: true };
  const { world, bridge } = await started('app.page', { viewer });
  assert.equal(bridge.hasScope('user:read:self'), false);
  assert.deepEqual(await bridge.getViewer(), viewer);
  assert.ok(!world.types().includes('GET_VIEWER'));
  bridge.requestConsent(['user:read:self']);
  bridge.requestSignIn('/after');
  const asked = world.sent.filter((m) => m.type === 'REQUEST_CONSENT' || m.type === 'REQUEST_SIGN_IN');
  assert.deepEqual(asked.map((m) => [m.type, m.payload]), [
    ['REQUEST_CONSENT', { scopes: ['user:read:self'] }], ['REQUEST_SIGN_IN', { returnUrl: '/after' }]]);
  // Allow: the host pushes TOKEN_REFRESH with the scope, and GET_VIEWER goes out from then on.
  world.deliver('TOKEN_REFRESH', { token: GRANTED });
  await tick();
  assert.equal(bridge.hasScope('user:read:self'), true);
  const pending = bridge.getViewer();
  await tick();
  answer(world, 'GET_VIEWER', 'VIEWER_RESULT', { viewer: { ...viewer, status: 'active', buzzBudget: null } });
  assert.equal((await pending).status, 'active');
});

test('on a model slot getViewer answers from BLOCK_INIT: the slot host does not bridge GET_VIEWER', async () => {
  const viewer = { id: 3, username: 'slot-viewer', signedIn: true };
  const { world, bridge } = await started('model.sidebar_top', { viewer });
  assert.deepEqual(await bridge.getViewer(), viewer);
  assert.ok(!world.types().includes('GET_VIEWER'));
});

test('a request waits for BLOCK_INIT before it posts, so it goes to the pinned origin only', async () => {
  const world = fakeWorld();
  const bridge = connect();
  const pending = bridge.storageGet('note');
  await tick();
  assert.ok(!world.types().includes('APP_STORAGE_GET'));
  world.deliver('BLOCK_INIT', init());
  await tick();
  const request = answer(world, 'APP_STORAGE_GET', 'APP_STORAGE_GET_RESULT', { value: { n: 1 } });
  assert.equal(request.targetOrigin, HOST);
  assert.deepEqual(request.payload.key, 'note');
  assert.deepEqual(await pending, { n: 1 });
});

test('a reply with another requestId, or from another origin, settles nothing', async () => {
  const { world, bridge } = await started();
  let settled = false;
  const pending = bridge.storageGet('k').then((value) => { settled = true; return value; });
  await tick();
  const request = world.sent.at(-1);
  world.deliver('APP_STORAGE_GET_RESULT', { requestId: 'other', value: 'wrong' });
  world.deliver('APP_STORAGE_GET_RESULT', { requestId: request.payload.requestId, value: 'evil' }, { origin: 'https://evil.example' });
  await tick();
  assert.equal(settled, false);
  world.deliver('APP_STORAGE_GET_RESULT', { requestId: request.payload.requestId, value: null });
  assert.equal(await pending, null);
});

test('storageSet and storageDelete send APP_STORAGE_SET {key, value} and APP_STORAGE_DELETE {key}', async () => {
  const { world, bridge } = await started();
  const saving = bridge.storageSet('note', { text: 'hi' });
  await tick();
  const set = answer(world, 'APP_STORAGE_SET', 'APP_STORAGE_SET_RESULT', { ok: true, sizeBytes: 13 });
  assert.deepEqual({ key: set.payload.key, value: set.payload.value }, { key: 'note', value: { text: 'hi' } });
  assert.deepEqual(await saving, { ok: true, sizeBytes: 13 });
  const deleting = bridge.storageDelete('note');
  await tick();
  answer(world, 'APP_STORAGE_DELETE', 'APP_STORAGE_DELETE_RESULT', { ok: true, deleted: true });
  assert.deepEqual(await deleting, { ok: true, deleted: true });
});

test('a refusal {ok: false, error} rejects with a BridgeError: a code as its code, a sentence as its message', async () => {
  const { world, bridge } = await started();
  const saving = bridge.storageSet('big', 'x');
  await tick();
  answer(world, 'APP_STORAGE_SET', 'APP_STORAGE_SET_RESULT', { ok: false, error: 'value exceeds 64KB cap' });
  await assert.rejects(saving, (error) => error instanceof BridgeError && error.code === 'REFUSED'
    && error.message === 'APP_STORAGE_SET refused: value exceeds 64KB cap' && error.reply.ok === false);
  const scoped = bridge.storageDelete('k');
  await tick();
  // The platform's refusal of an undeclared scope is a sentence (was {error: 'SCOPE_NOT_DECLARED: ...'}).
  answer(world, 'APP_STORAGE_DELETE', 'APP_STORAGE_DELETE_RESULT',
    { ok: false, deleted: false, error: 'block lacks apps:storage:write scope' });
  await assert.rejects(scoped, (error) => error.code === 'REFUSED'
    && error.message === 'APP_STORAGE_DELETE refused: block lacks apps:storage:write scope');
  const reading = bridge.storageGet('k');
  await tick();
  answer(world, 'APP_STORAGE_GET', 'APP_STORAGE_GET_RESULT', { value: null, error: 'storage unavailable' });
  await assert.rejects(reading, { code: 'REFUSED' });
});

test('a dialog message waits past the usual timeout', async () => {
  const { world, bridge } = await started();
  const buying = bridge.request('OPEN_BUZZ_PURCHASE');
  await new Promise((resolve) => setTimeout(resolve, 30));
  answer(world, 'OPEN_BUZZ_PURCHASE', 'BUZZ_PURCHASE_RESULT', { purchased: false });
  assert.deepEqual(await buying, { purchased: false });
});

// A fake fetch answering each call with the next of `answers` ([status, body]).
function fakeFetch(answers) {
  const calls = [];
  globalThis.fetch = async (url, options = {}) => {
    calls.push({ url, method: options.method, auth: options.headers.get('Authorization'),
      type: options.headers.get('Content-Type'), body: options.body === undefined ? undefined : JSON.parse(options.body) });
    const [status, body] = answers.shift();
    return { ok: status >= 200 && status < 300, status, statusText: '', json: async () => body };
  };
  return calls;
}

test('purchaseGood POSTs /api/v1/blocks/goods/purchase with the token and resolves {ok, purchase, entitlement}', async () => {
  const { bridge } = await started('app.page', { apiBaseUrl: 'http://127.0.0.1:4100' });
  const bought = { ok: true, purchase: { id: 'p1', goodId: 'supporter-pack', priceBuzz: 100 },
    entitlement: { goodId: 'supporter-pack', kind: 'good', payload: {}, grantedAt: '2026-11-23T00:00:00.000Z' } };
  const calls = fakeFetch([[200, bought]]);
  assert.deepEqual(await bridge.purchaseGood('supporter-pack', { expectedPriceBuzz: 100, idempotencyKey: 'k1' }), bought);
  assert.deepEqual(calls, [{ url: 'http://127.0.0.1:4100/api/v1/blocks/goods/purchase', method: 'POST', auth: 'Bearer jwt-1',
    type: 'application/json', body: { goodId: 'supporter-pack', expectedPriceBuzz: 100, idempotencyKey: 'k1' } }]);
  delete globalThis.fetch;
});

test('a refused purchase rejects with its reason as the code, else HTTP_<status>', async () => {
  const { bridge } = await started();
  fakeFetch([
    [409, { ok: false, error: 'You already own this item', reason: 'already_owned' }],
    [404, { ok: false, error: 'This item is not available' }],
    [400, { error: 'Daily purchase limit reached (150000 Buzz). Try again tomorrow.' }],
  ]);
  await assert.rejects(bridge.purchaseGood('a'), (error) => error instanceof BridgeError && error.code === 'already_owned'
    && /You already own this item/.test(error.message));
  await assert.rejects(bridge.purchaseGood('b'), { code: 'HTTP_404' });
  await assert.rejects(bridge.purchaseGood('c'), (error) => error.code === 'HTTP_400' && /Daily purchase limit/.test(error.message));
  delete globalThis.fetch;
});

test('getEntitlements reads GET /api/v1/blocks/entitlements: {entitlements}', async () => {
  const { bridge } = await started();
  const owned = [{ goodId: 'supporter-pack', kind: 'good', payload: {}, grantedAt: '2026-11-23T00:00:00.000Z' }];
  const calls = fakeFetch([[200, { entitlements: owned }], [403, { error: 'Anonymous block tokens hold no entitlements' }]]);
  assert.deepEqual(await bridge.getEntitlements(), { entitlements: owned });
  assert.deepEqual(calls.map((c) => [c.url, c.method, c.auth]), [[`${PLATFORM_API_BASE}/api/v1/blocks/entitlements`, undefined, 'Bearer jwt-1']]);
  await assert.rejects(bridge.getEntitlements(), { code: 'HTTP_403' });
  delete globalThis.fetch;
});

test('submit, estimate, poll and cancel a workflow: {body} out, the reply\'s snapshot back', async () => {
  const { world, bridge } = await started();
  const template = { steps: [{ $type: 'imageUpscaler', input: { image: 'data:image/png;base64,AA==', numberOfRepeats: 1 } }] };
  const submitting = bridge.submitWorkflow(template);
  await tick();
  const submit = answer(world, 'SUBMIT_WORKFLOW', 'WORKFLOW_SUBMITTED',
    { snapshot: { workflowId: 'wf1', status: 'pending', cost: { total: 4 }, spentAccountType: 'blue' } });
  assert.deepEqual(submit.payload.body, template);
  assert.ok(!('workflow' in submit.payload));
  assert.deepEqual(await submitting, { workflowId: 'wf1', status: 'pending', cost: { total: 4 }, spentAccountType: 'blue' });
  const body = { kind: 'textToImage', params: { prompt: 'a fox' } };
  const estimating = bridge.estimateWorkflow(body);
  await tick();
  assert.deepEqual(answer(world, 'ESTIMATE_WORKFLOW', 'ESTIMATE_RESULT', { snapshot: { workflowId: 'whatif', status: 'pending', cost: { total: 2 } } }).payload.body, body);
  assert.equal((await estimating).cost.total, 2);
  const polling = bridge.pollWorkflow('wf1');
  await tick();
  assert.equal(answer(world, 'POLL_WORKFLOW', 'WORKFLOW_STATUS', { snapshot: { workflowId: 'wf1', status: 'processing' } }).payload.workflowId, 'wf1');
  assert.equal((await polling).status, 'processing');
  const canceling = bridge.cancelWorkflow('wf1');
  await tick();
  answer(world, 'CANCEL_WORKFLOW', 'WORKFLOW_CANCELED', { snapshot: { workflowId: 'wf1', status: 'canceled' } });
  assert.equal((await canceling).status, 'canceled');
});

test('a refused workflow request (a failed snapshot with workflowId "failed") rejects; a workflow that failed resolves', async () => {
  const { world, bridge } = await started();
  const over = bridge.submitWorkflow({ kind: 'textToImage', params: { prompt: 'big' } });
  await tick();
  answer(world, 'SUBMIT_WORKFLOW', 'WORKFLOW_SUBMITTED', { snapshot: { workflowId: 'failed', status: 'failed',
    cost: { total: 80 }, error: 'insufficient buzz budget: estimate 80 exceeds budget 50' } });
  await assert.rejects(over, (error) => error instanceof BridgeError && error.code === 'WORKFLOW_REFUSED'
    && /estimate 80 exceeds budget 50/.test(error.message) && error.reply.snapshot.cost.total === 80);
  const polled = bridge.pollWorkflow('wf9');
  await tick();
  answer(world, 'POLL_WORKFLOW', 'WORKFLOW_STATUS', { snapshot: { workflowId: 'wf9', status: 'failed' } });
  assert.deepEqual(await polled, { workflowId: 'wf9', status: 'failed' });
  const empty = bridge.pollWorkflow('wf9');
  await tick();
  answer(world, 'POLL_WORKFLOW', 'WORKFLOW_STATUS', {});
  await assert.rejects(empty, { code: 'BAD_REPLY' });
});

test('waitForWorkflow polls until a finished status and reports each snapshot', async () => {
  const { world, bridge } = await started();
  const seen = [];
  const waiting = bridge.waitForWorkflow('wf2', { intervalMs: 1, onStatus: (s) => seen.push(s.status) });
  for (const status of ['pending', 'processing', 'succeeded']) {
    await tick();
    const snapshot = { workflowId: 'wf2', status, ...(status === 'succeeded' ? { imageUrls: ['http://x/1.png'] } : {}) };
    answer(world, 'POLL_WORKFLOW', 'WORKFLOW_STATUS', { snapshot });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const done = await waiting;
  assert.equal(done.status, 'succeeded');
  assert.deepEqual(done.imageUrls, ['http://x/1.png']);
  assert.deepEqual(seen, ['pending', 'processing', 'succeeded']);
  assert.equal(world.types().filter((t) => t === 'POLL_WORKFLOW').length, 3);
  assert.ok(FINISHED_STATUSES.includes('failed') && FINISHED_STATUSES.includes('canceled'));
});

test('a helper the host never answers rejects with TIMEOUT', async () => {
  const { bridge } = await started();
  await assert.rejects(bridge.request('GET_BUZZ_BALANCE', {}, { timeoutMs: 20 }),
    (error) => error.code === 'TIMEOUT' && /did not answer GET_BUZZ_BALANCE within 20 ms/.test(error.message));
});

test('fetchApi calls apiBaseUrl + path with the block token; without apiBaseUrl, the platform\'s base', async () => {
  const calls = [];
  globalThis.fetch = async (url, options) => {
    calls.push({ url, auth: options.headers.get('Authorization'), method: options.method });
    return { ok: true, status: 200 };
  };
  let { bridge } = await started('app.page', { apiBaseUrl: 'http://127.0.0.1:4100/' });
  assert.equal(bridge.apiBaseUrl(), 'http://127.0.0.1:4100');
  await bridge.fetchApi('/api/v1/blocks/models?limit=3');
  ({ bridge } = await started());
  assert.equal(bridge.apiBaseUrl(), PLATFORM_API_BASE);
  await bridge.fetchApi('/api/v1/blocks/entitlements', { method: 'GET' });
  assert.deepEqual(calls, [
    { url: 'http://127.0.0.1:4100/api/v1/blocks/models?limit=3', auth: 'Bearer jwt-1', method: undefined },
    { url: `${PLATFORM_API_BASE}/api/v1/blocks/entitlements`, auth: 'Bearer jwt-1', method: 'GET' },
  ]);
  delete globalThis.fetch;
});

test('under blockkit dev (apiBaseUrl sent) the bridge is window.blockkit; on the platform it is not', async () => {
  delete globalThis.blockkit;
  await started();
  assert.equal(globalThis.blockkit, undefined);
  const { bridge } = await started('app.page', { apiBaseUrl: 'http://127.0.0.1:4100' });
  assert.equal(globalThis.blockkit, bridge);
  delete globalThis.blockkit;
});

test('in a preview the helpers refuse at once with NO_HOST and post nothing', async () => {
  const world = fakeWorld();
  window.parent = window;
  const bridge = connect();
  await tick();
  await assert.rejects(bridge.storageGet('k'), { code: 'NO_HOST' });
  await assert.rejects(bridge.fetchApi('/api/v1/blocks/models'), { code: 'NO_HOST' });
  assert.equal(await bridge.getViewer(), null);
  assert.equal(world.sent.length, 0);
});

test('the pickers and the upload resolve the selection, and null when the viewer closes them', async () => {
  const { world, bridge } = await started();
  const picked = { versionId: 11, modelId: 3, modelName: 'M', versionName: 'v1', baseModel: 'SDXL 1.0' };
  const picking = bridge.pickCheckpoint({ baseModelGroup: 'SDXL' });
  await tick();
  const request = answer(world, 'OPEN_CHECKPOINT_PICKER', 'CHECKPOINT_PICKER_RESULT', { selected: picked });
  assert.equal(request.payload.baseModelGroup, 'SDXL');
  assert.deepEqual(await picking, picked);
  const dismissed = bridge.pickCheckpoint();
  await tick();
  assert.equal('baseModelGroup' in answer(world, 'OPEN_CHECKPOINT_PICKER', 'CHECKPOINT_PICKER_RESULT', {}).payload, false);
  assert.equal(await dismissed, null);
  const lora = bridge.pickResource('LORA');
  await tick();
  assert.equal(answer(world, 'OPEN_RESOURCE_PICKER', 'RESOURCE_PICKER_RESULT', {}).payload.resourceType, 'LORA');
  assert.equal(await lora, null);
  const uploading = bridge.uploadImage({ purpose: 'generationSource' });
  await tick();
  const upload = answer(world, 'OPEN_IMAGE_UPLOAD', 'IMAGE_UPLOAD_RESULT', { selected: { url: 'https://x/a.png', width: 2, height: 3 } });
  assert.equal(upload.payload.purpose, 'generationSource');
  assert.deepEqual(await uploading, { url: 'https://x/a.png', width: 2, height: 3 });
});

test('an asyncScan upload resolves pending, and the verdict comes to onImageScanResolved', async () => {
  const { world, bridge } = await started();
  const heard = [];
  const stop = bridge.onImageScanResolved((push) => heard.push(push));
  const uploading = bridge.uploadImage({ asyncScan: true });
  await tick();
  const request = answer(world, 'OPEN_IMAGE_UPLOAD', 'IMAGE_UPLOAD_RESULT',
    { selected: { status: 'pending', imageId: 5, url: 'https://x/5.png' } });
  assert.equal(request.payload.asyncScan, true);
  assert.deepEqual(await uploading, { status: 'pending', imageId: 5, url: 'https://x/5.png' });
  const verdict = { requestId: request.payload.requestId, imageId: 5, result: { status: 'scanned', image: { imageId: 5 } } };
  world.deliver('IMAGE_SCAN_RESOLVED', verdict);
  assert.deepEqual(heard, [verdict]);
  stop();
  world.deliver('IMAGE_SCAN_RESOLVED', verdict);
  assert.equal(heard.length, 1);
});

test('save, packs, checkpoints and publish read the platform shapes and its {error} refusals', async () => {
  const { world, bridge } = await started();
  const saving = bridge.saveImage({ url: 'https://image.civitai.com/a.png' }, 'a.png');
  await tick();
  assert.deepEqual(answer(world, 'SAVE_IMAGE', 'SAVE_IMAGE_RESULT', { ok: true }).payload.filename, 'a.png');
  assert.equal(await saving, undefined);
  const busy = bridge.saveImage({ imageId: 4 });
  await tick();
  answer(world, 'SAVE_IMAGE', 'SAVE_IMAGE_RESULT', { ok: false, error: 'busy' });
  await assert.rejects(busy, { code: 'busy' });
  const refused = bridge.saveImage({ url: 'data:image/png;base64,AA==' });
  await tick();
  answer(world, 'SAVE_IMAGE', 'SAVE_IMAGE_RESULT', { ok: false, error: 'image url is not allowed' });
  await assert.rejects(refused, (error) => error.code === 'REFUSED' && error.message === 'SAVE_IMAGE refused: image url is not allowed');
  const pack = bridge.getWildcardPack(12);
  await tick();
  assert.equal(answer(world, 'GET_WILDCARD_PACK', 'WILDCARD_PACK_RESULT', { pack: { lists: { a: ['b'] } } }).payload.modelVersionId, 12);
  assert.deepEqual(await pack, { lists: { a: ['b'] } });
  const missing = bridge.getWildcardPack(13);
  await tick();
  answer(world, 'GET_WILDCARD_PACK', 'WILDCARD_PACK_RESULT', { error: 'not-found' });
  await assert.rejects(missing, { code: 'not-found' });
  const setting = bridge.setUserCheckpoint(null);
  await tick();
  assert.equal(answer(world, 'SET_USER_CHECKPOINT', 'USER_CHECKPOINT_SET', { ok: true }).payload.versionId, null);
  assert.equal(await setting, undefined);
  const publishing = bridge.publishOutputs('wf1', [0]);
  await tick();
  answer(world, 'PUBLISH_GENERATION_OUTPUTS', 'PUBLISH_RESULT', { result: { imageIds: [9] } });
  assert.deepEqual(await publishing, [9]);
  const canceled = bridge.publishOutputs('wf1');
  await tick();
  answer(world, 'PUBLISH_GENERATION_OUTPUTS', 'PUBLISH_RESULT', { error: 'publish canceled' });
  await assert.rejects(canceled, { code: 'CANCELED' });
});
