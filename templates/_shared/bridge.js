// The host bridge: how this block talks to the page that frames it.
//
// The host posts BLOCK_INIT (again about every 400 ms) until the block answers
// BLOCK_READY {height}; after 10 s without an answer a page shows a failure card
// and a model slot collapses. This module answers for you, keeps the token fresh,
// follows the host's theme, and resizes the frame on model slots (the page host
// ignores resize requests). Written by `blockkit new`; it is yours to change.
// Every message is {type, payload}.

/**
 * @typedef {object} BlockToken
 * @property {string} raw
 * @property {string[]} scopes
 * @property {string} expiresAt
 * @property {number} [buzzBudget]
 * @property {string} [kind] "oauth" when the host minted an OAuth token, else a block token
 */

/**
 * @typedef {object} BlockContext
 * @property {string} slotId "app.page" on the page, else the model slot's id
 * @property {string} [slug]
 * @property {string} [subPath]
 * @property {number} [viewerUserId]
 * @property {number} [modelId]
 * @property {number} [modelVersionId]
 * @property {string} [modelName]
 * @property {string} [modelType]
 * @property {number} [modelNsfwLevel]
 */

/**
 * @typedef {object} BlockInit
 * @property {string} blockInstanceId
 * @property {string} blockId
 * @property {string} appId
 * @property {BlockToken} token
 * @property {BlockContext} context
 * @property {{publisherSettings: Record<string, unknown>, userSettings: Record<string, unknown>}} settings
 * @property {unknown} viewer
 * @property {string} theme
 * @property {string} renderMode
 * @property {number} [maxBrowsingLevel]
 * @property {number} [effectiveBrowsingLevel]
 * @property {boolean} [standalone] set by this bridge when no host frames the block
 */

/**
 * @typedef {object} BridgeState
 * @property {BlockInit | null} init
 * @property {BlockToken | null} token
 * @property {string | null} theme
 * @property {string | null} subPath
 * @property {boolean} suspended
 */

/**
 * @typedef {object} BridgeOptions
 * @property {string} [slot] the surface the manifest declares; used only for the standalone preview
 * @property {(init: BlockInit) => unknown} [onInit] render here; BLOCK_READY is sent once it returns (or its promise settles)
 * @property {() => number} [measureHeight] the height reported to the host
 */

/**
 * @typedef {object} Bridge
 * @property {() => BridgeState} getState
 * @property {(listener: () => void) => () => void} subscribe
 * @property {() => Promise<BlockToken>} getToken a token valid for at least another minute
 * @property {(timeoutMs?: number) => Promise<BlockToken>} requestToken
 * @property {(path: string) => void} navigate
 * @property {(message: string, fatal?: boolean) => void} reportError
 * @property {() => void} disconnect
 */

export const BRIDGE_ID = 'blockkit-bridge/1';
export const PAGE_SLOT = 'app.page';
// A request the host never answers would hang the block; give up after this.
const REQUEST_TIMEOUT_MS = 10000;
// Refresh a little early so a call in flight never carries an expired token.
const TOKEN_MARGIN_MS = 60000;

/**
 * The host's early hint, `#civitai-block=v1&theme=…&renderMode=…&blockInstanceId=…`,
 * readable before BLOCK_INIT so the first paint already has the right theme.
 * @param {string} [hash]
 * @returns {{theme: string | null, renderMode: string | null, blockInstanceId: string | null} | null}
 */
export function readFragmentHint(hash = window.location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  if (params.get('civitai-block') !== 'v1') return null;
  return {
    theme: params.get('theme'),
    renderMode: params.get('renderMode'),
    blockInstanceId: params.get('blockInstanceId'),
  };
}

/** @param {string | null | undefined} theme */
export function applyTheme(theme) {
  if (!theme) return;
  const root = document.documentElement;
  root.dataset.theme = theme;
  // Form controls and scrollbars follow the theme too.
  root.style.colorScheme = theme === 'dark' || theme === 'light' ? theme : '';
}

function defaultHeight() {
  const root = document.getElementById('root');
  const measured = root ? root.getBoundingClientRect().height : document.documentElement.scrollHeight;
  return Math.ceil(measured);
}

/**
 * @param {string} slot
 * @returns {BlockInit}
 */
function standaloneInit(slot) {
  return {
    blockInstanceId: 'standalone',
    blockId: '',
    appId: '',
    token: { raw: '', scopes: [], expiresAt: new Date(0).toISOString(), kind: 'none' },
    context: { slotId: slot },
    settings: { publisherSettings: {}, userSettings: {} },
    viewer: null,
    theme: window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
    renderMode: 'iframe',
    standalone: true,
  };
}

/**
 * Start listening to the host. Call once, as early as possible.
 * @param {BridgeOptions} [options]
 * @returns {Bridge}
 */
export function connect(options = {}) {
  const measureHeight = options.measureHeight ?? defaultHeight;
  /** @type {BridgeState} */
  let state = { init: null, token: null, theme: null, subPath: null, suspended: false };
  /** @type {Set<() => void>} */
  const listeners = new Set();
  /** @type {Map<string, (token: BlockToken) => void>} */
  const pending = new Map();
  /** @type {'waiting' | 'starting' | 'ready' | 'failed'} */
  let phase = 'waiting';
  // Learnt from the first BLOCK_INIT; until then nothing secret is sent.
  /** @type {string | null} */
  let hostOrigin = null;
  let requestCount = 0;
  /** @type {ResizeObserver | null} */
  let observer = null;
  let lastHeight = -1;

  /** @param {Partial<BridgeState>} change */
  function update(change) {
    state = { ...state, ...change };
    listeners.forEach((listener) => listener());
  }

  /**
   * @param {string} type
   * @param {Record<string, unknown>} payload
   */
  function post(type, payload) {
    window.parent.postMessage({ type, payload }, hostOrigin ?? '*');
  }

  function sendReady() {
    post('BLOCK_READY', { height: measureHeight() });
  }

  // RESIZE_IFRAME is honoured only on model slots; the page host sizes the frame itself.
  function startResizing() {
    if (observer || state.init?.context?.slotId === PAGE_SLOT || typeof ResizeObserver === 'undefined') return;
    let scheduled = false;
    observer = new ResizeObserver(() => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        const height = measureHeight();
        if (height !== lastHeight) {
          lastHeight = height;
          post('RESIZE_IFRAME', { height });
        }
      });
    });
    observer.observe(document.getElementById('root') ?? document.body);
  }

  /** @param {BlockInit} init */
  function start(init) {
    phase = 'starting';
    update({ init, token: init.token ?? null, theme: init.theme ?? null, subPath: init.context?.subPath ?? null });
    applyTheme(init.theme);
    Promise.resolve()
      .then(() => options.onInit?.(init))
      .then(
        () => {
          phase = 'ready';
          if (init.standalone) return;
          sendReady();
          startResizing();
        },
        (error) => {
          phase = 'failed';
          console.error(error);
          if (!init.standalone) post('BLOCK_ERROR', { message: String(error?.message ?? error), fatal: true });
        },
      );
  }

  /**
   * @param {BlockInit} init
   * @param {string} origin
   */
  function onInit(init, origin) {
    if (!init || typeof init !== 'object') return;
    const sameInstance = state.init?.blockInstanceId === init.blockInstanceId;
    // The host re-posts BLOCK_INIT until it hears BLOCK_READY, so a repeat means
    // our answer was lost (answer again) or is still being prepared (wait).
    if (sameInstance && phase === 'ready') return sendReady();
    if (sameInstance && phase !== 'waiting') return;
    if (origin && origin !== 'null') hostOrigin = origin;
    start(init);
  }

  /** @param {BlockToken | undefined} token */
  function setToken(token) {
    if (token) update({ token });
  }

  /** @param {MessageEvent} event */
  function onMessage(event) {
    // Only the framing host may drive the block, and once known only from its origin.
    if (event.source !== window.parent) return;
    if (hostOrigin && event.origin !== hostOrigin) return;
    const data = event.data;
    if (!data || typeof data !== 'object' || typeof data.type !== 'string') return;
    const payload = data.payload ?? {};
    switch (data.type) {
      case 'BLOCK_INIT':
        return onInit(payload, event.origin);
      case 'TOKEN_REFRESH':
        return setToken(payload.token);
      case 'TOKEN_REFRESH_RESPONSE': {
        const settle = pending.get(payload.requestId);
        if (settle) settle(payload.token);
        return;
      }
      case 'THEME_CHANGE':
        applyTheme(payload.theme);
        return update({ theme: payload.theme ?? null });
      case 'ROUTE_CHANGED':
        return update({ subPath: payload.subPath ?? null });
      case 'SUSPEND':
        return update({ suspended: true });
      case 'RESUME':
        return update({ suspended: false });
    }
  }

  function nextRequestId() {
    requestCount += 1;
    return `${BRIDGE_ID}:${Date.now().toString(36)}:${requestCount}`;
  }

  /** @param {number} [timeoutMs] */
  function requestToken(timeoutMs = REQUEST_TIMEOUT_MS) {
    const requestId = nextRequestId();
    return /** @type {Promise<BlockToken>} */ (
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(requestId);
          reject(new Error(`the host did not answer REQUEST_TOKEN within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(requestId, (token) => {
          clearTimeout(timer);
          pending.delete(requestId);
          setToken(token);
          resolve(token);
        });
        post('REQUEST_TOKEN', { requestId });
      })
    );
  }

  async function getToken() {
    const token = state.token;
    if (token && Date.parse(token.expiresAt) - Date.now() > TOKEN_MARGIN_MS) return token;
    return requestToken();
  }

  applyTheme(readFragmentHint()?.theme);
  window.addEventListener('message', onMessage);
  if (window.parent === window) {
    // Opened in a tab, not framed by a host: render a preview so `dev` shows something.
    start(standaloneInit(options.slot ?? PAGE_SLOT));
  } else {
    post('BLOCK_HELLO', { bridge: BRIDGE_ID });
  }

  return {
    getState: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    getToken,
    requestToken,
    navigate: (path) => post('NAVIGATE', { path }),
    reportError: (message, fatal = false) => post('BLOCK_ERROR', { message, fatal }),
    disconnect() {
      window.removeEventListener('message', onMessage);
      observer?.disconnect();
      observer = null;
    },
  };
}
