// The host bridge: how this block talks to the page that frames it.
//
// The host posts BLOCK_INIT (again about every 400 ms) until the block answers
// BLOCK_READY {height}; after 10 s without an answer a page shows a failure card
// and a model slot collapses. This module answers for you, keeps the token fresh,
// follows the host's theme, and resizes the frame on model slots (the page host
// ignores resize requests). It also wraps the host's request messages (viewer,
// goods, workflows, app storage) and calls to the platform's API with the
// block's token. Written by `blockkit new`; it is yours to change.
// Replies follow the platform's shapes: docs/platform-shapes.md in blockkit lists them.
// Every message is {type, payload}; a request carries a requestId its reply echoes.

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
 * @property {string} [apiBaseUrl] sent by `blockkit dev` only: where its local platform answers
 */

/**
 * GET_VIEWER's answer (VIEWER_RESULT.viewer): who is looking at the block. It needs the
 * user:read:self scope. On a model slot getViewer returns BLOCK_INIT's deprecated
 * {id, username, signedIn} instead.
 * @typedef {object} Viewer
 * @property {number} id
 * @property {string} username
 * @property {'active' | 'muted'} [status]
 * @property {number | null} [buzzBudget] the token's per-generation budget, when it has one
 * @property {boolean} [signedIn]
 */

/**
 * @typedef {object} WorkflowStep
 * @property {string} $type e.g. "imageUpscaler" or "textToImage"
 * @property {string} [name]
 * @property {Record<string, unknown>} input
 * @property {string} [status]
 * @property {Record<string, any> | null} [output] e.g. {blob: {url, width, height}} for an upscale
 */

/**
 * A WorkflowTemplate: {steps: [{$type, input}]}, as the orchestration service takes it.
 * `blockkit dev` accepts it as a SUBMIT_WORKFLOW body (its imageUpscaler and textToImage steps).
 * @typedef {object} WorkflowTemplate
 * @property {WorkflowStep[]} steps
 * @property {string[]} [tags]
 * @property {Record<string, unknown>} [metadata]
 * @property {boolean} [allowMatureContent]
 * @property {'blue' | 'green' | 'yellow'} [accountType] the Buzz pool to pay from first
 */

/**
 * The platform's SUBMIT_WORKFLOW body: one text-to-image generation.
 * @typedef {object} TextToImageBody
 * @property {'textToImage'} kind
 * @property {number} [modelVersionId]
 * @property {{prompt: string, negativePrompt?: string, width?: number, height?: number, seed?: number, quantity?: number}} params
 * @property {'blue' | 'green' | 'yellow'} [accountType]
 */

/**
 * @typedef {TextToImageBody | WorkflowTemplate} WorkflowBody
 */

/**
 * What every workflow reply carries: the platform's BlockWorkflowSnapshot.
 * @typedef {object} WorkflowSnapshot
 * @property {string} workflowId "whatif" for an estimate
 * @property {string} status "pending", "processing", "succeeded", "failed", "canceled" or "expired"
 * @property {{total: number}} [cost] in Buzz
 * @property {string[]} [imageUrls] the outputs available so far
 * @property {string} [spentAccountType] the Buzz pool that paid most
 * @property {string} [error] why it failed
 */

/**
 * An entitlement: a good the viewer owns in this app.
 * @typedef {object} Entitlement
 * @property {string} goodId
 * @property {string} kind "good" or "app_unlock"
 * @property {Record<string, unknown>} payload the good's payload ({} when none)
 * @property {string} grantedAt
 */

/**
 * @typedef {object} PurchaseOptions
 * @property {number} [expectedPriceBuzz] the price the viewer confirmed; another price is refused (price_changed)
 * @property {string} [idempotencyKey] 1-64 of [A-Za-z0-9_-]; a retry with the same key is not charged twice
 */

/**
 * A bought good: POST /api/v1/blocks/goods/purchase's answer.
 * @typedef {object} Purchase
 * @property {true} ok
 * @property {{id: string, goodId: string, priceBuzz: number}} purchase
 * @property {Entitlement} entitlement
 */

/**
 * @typedef {object} RequestOptions
 * @property {number} [timeoutMs] give up after this long (0: wait for ever)
 */

/**
 * @typedef {object} WaitOptions
 * @property {number} [intervalMs] between polls (default 1000)
 * @property {number} [timeoutMs] give up after this long (default 10 minutes; 0: never)
 * @property {(snapshot: WorkflowSnapshot) => void} [onStatus] called with every polled snapshot
 */

/**
 * A checkpoint the viewer picked in the host's picker (CHECKPOINT_PICKER_RESULT.selected).
 * @typedef {object} PickedCheckpoint
 * @property {number} versionId the model version id
 * @property {number} modelId
 * @property {string} modelName
 * @property {string} versionName
 * @property {string} baseModel
 */

/**
 * A resource the viewer picked (RESOURCE_PICKER_RESULT.selected): a checkpoint or a LoRA.
 * @typedef {PickedCheckpoint & {modelType: string, strength: number, minStrength: number, maxStrength: number,
 *   trainedWords: string[], clipSkip: number | null}} PickedResource
 */

/**
 * An uploaded image (IMAGE_UPLOAD_RESULT.selected). A display upload (the default) is scanned:
 * {imageId, nsfwLevel, contentRating, url}; with asyncScan it is {status: 'pending', imageId, url} and the
 * verdict comes later (onImageScanResolved); a generationSource upload is {url, width, height}.
 * @typedef {Record<string, any>} UploadedImage
 */

/**
 * @typedef {object} UploadOptions
 * @property {'display' | 'generationSource'} [purpose] 'display' (public, scanned) by default
 * @property {boolean} [asyncScan] display only: resolve at once with a pending handle, the verdict later
 */

/**
 * IMAGE_SCAN_RESOLVED: the verdict on an asyncScan upload.
 * @typedef {object} ImageScanResolved
 * @property {string} requestId the upload request's id
 * @property {number} imageId
 * @property {{status: 'scanned', image: UploadedImage} | {status: 'blocked', reason?: string} | {status: 'error', message?: string}} result
 */

/**
 * A wildcard pack (WILDCARD_PACK_RESULT.pack).
 * @typedef {object} WildcardPack
 * @property {number} modelId
 * @property {number} modelVersionId
 * @property {string} modelName
 * @property {string} versionName
 * @property {string | null} creatorUsername
 * @property {Record<string, string[]>} lists
 * @property {boolean} truncated
 * @property {string[]} truncatedLists
 * @property {{browsingLevel: number, sfwOnly: boolean}} maturity
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
 * @property {(type: string, payload?: Record<string, unknown>, options?: RequestOptions) => Promise<Record<string, any>>} request
 *   send any request message of the host's inventory; resolves with its reply's payload
 * @property {() => Promise<Viewer | null>} getViewer GET_VIEWER's viewer; null when the viewer is signed out
 *   (BLOCK_INIT's viewer while the token lacks user:read:self, before the viewer's consent)
 * @property {(scope: string) => boolean} hasScope whether the token held now carries the scope
 * @property {(scopes?: string[]) => void} requestConsent REQUEST_CONSENT: the host's consent step; on Allow a
 *   TOKEN_REFRESH brings the withheld scopes, on "Not now" nothing comes (no reply either way)
 * @property {(scopes: string[], timeoutMs?: number) => Promise<boolean>} ensureScopes true once the token carries
 *   every scope: asks the host's consent step for those it lacks and waits for the TOKEN_REFRESH that brings
 *   them; false when none comes in time (the viewer chose "Not now", which sends nothing; default 60 s)
 * @property {(returnUrl?: string) => void} requestSignIn REQUEST_SIGN_IN: the host's sign-in step (no reply)
 * @property {() => string} apiBaseUrl where the platform's API answers, without a trailing slash
 * @property {(path: string, init?: RequestInit) => Promise<Response>} fetchApi fetch(apiBaseUrl + path) with the block's token
 * @property {(goodId: string, options?: PurchaseOptions) => Promise<Purchase>} purchaseGood
 *   POST /api/v1/blocks/goods/purchase: buys at once, so ask the viewer first
 * @property {() => Promise<{entitlements: Entitlement[]}>} getEntitlements GET /api/v1/blocks/entitlements
 * @property {(body: WorkflowBody) => Promise<WorkflowSnapshot>} submitWorkflow SUBMIT_WORKFLOW {body}
 * @property {(body: WorkflowBody) => Promise<WorkflowSnapshot>} estimateWorkflow ESTIMATE_WORKFLOW {body}: the cost, nothing spent
 * @property {(workflowId: string) => Promise<WorkflowSnapshot>} pollWorkflow
 * @property {(workflowId: string) => Promise<WorkflowSnapshot>} cancelWorkflow
 * @property {(workflowId: string, options?: WaitOptions) => Promise<WorkflowSnapshot>} waitForWorkflow
 *   poll until the workflow finishes (any status in FINISHED_STATUSES)
 * @property {(key: string) => Promise<unknown>} storageGet the stored value, or null
 * @property {(key: string, value: unknown) => Promise<Record<string, any>>} storageSet
 * @property {(key: string) => Promise<Record<string, any>>} storageDelete
 * @property {(options?: {baseModelGroup?: string}) => Promise<PickedCheckpoint | null>} pickCheckpoint
 *   OPEN_CHECKPOINT_PICKER: checkpoints of the family (`baseModelGroup`, e.g. 'SDXL' or 'Flux.1 D'; none: an empty list)
 * @property {(resourceType: 'Checkpoint' | 'LORA', options?: {baseModelGroup?: string}) => Promise<PickedResource | null>} pickResource
 *   OPEN_RESOURCE_PICKER (page only): another type opens nothing, and the host never answers
 * @property {(options?: UploadOptions) => Promise<UploadedImage | null>} uploadImage OPEN_IMAGE_UPLOAD (page only)
 * @property {(listener: (push: ImageScanResolved) => void) => () => void} onImageScanResolved
 * @property {(target: {url: string} | {imageId: number}, filename?: string) => Promise<void>} saveImage
 *   SAVE_IMAGE (page only): an https URL on the platform's image hosts, or a published image's id; the host downloads it
 * @property {(modelVersionId: number) => Promise<WildcardPack>} getWildcardPack GET_WILDCARD_PACK (page only)
 * @property {(versionId: number | null) => Promise<void>} setUserCheckpoint
 *   SET_USER_CHECKPOINT: model slots only (a page always refuses); null clears the choice
 * @property {(workflowId: string, imageIndexes?: number[]) => Promise<number[]>} publishOutputs
 *   PUBLISH_GENERATION_OUTPUTS (page only): the host asks the viewer first; Cancel rejects with code CANCELED
 */

/**
 * A refused or unanswered request. The platform refuses with `{error: sentence}` (some replies add
 * `ok: false`). `code` is the error itself when it is one word ("busy", "not-found", "already_owned",
 * "banned"), "CANCELED" when the viewer declined a publish, "REFUSED" for any other sentence (the sentence
 * is in `message`, the whole reply in `reply`), "WORKFLOW_REFUSED" for a failed snapshot of a refused
 * workflow request, or "TIMEOUT", "NO_HOST", "HTTP_<status>".
 */
export class BridgeError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {Record<string, any>} [reply] the reply's payload, when there was one
   */
  constructor(code, message, reply) {
    super(message);
    this.name = 'BridgeError';
    this.code = code;
    this.reply = reply;
  }
}

export const BRIDGE_ID = 'blockkit-bridge/1';
export const PAGE_SLOT = 'app.page';
// The platform's API origin (the host of the manifest schema's $id). The real host
// sends no apiBaseUrl; `blockkit dev` sends its local platform's.
export const PLATFORM_API_BASE = 'https://civitai.com';
// A request the host never answers would hang the block; give up after this.
const REQUEST_TIMEOUT_MS = 10000;
// A dialog waits for the viewer (confirm or cancel), so it gets much longer.
const DIALOG_TIMEOUT_MS = 10 * 60000;
// The host's requests that open a dialog (PURCHASE_GOOD is blockkit dev's own).
const DIALOG_MESSAGES = new Set(['OPEN_BUZZ_PURCHASE', 'OPEN_CHECKPOINT_PICKER', 'OPEN_RESOURCE_PICKER', 'OPEN_IMAGE_UPLOAD',
  'PUBLISH_GENERATION_OUTPUTS', 'PURCHASE_GOOD']);
const POLL_INTERVAL_MS = 1000;
// waitForWorkflow's default limit: a queue and a few steps, with room to spare.
const WAIT_TIMEOUT_MS = 10 * 60000;
// Workflow statuses after which polling stops.
export const FINISHED_STATUSES = ['succeeded', 'failed', 'canceled', 'expired'];
// How long ensureScopes waits for the viewer's answer to the host's consent step ("Not now" sends nothing).
const CONSENT_WAIT_MS = 60000;
// A BLOCK_INIT repeated this long after our BLOCK_READY means the host did not hear it (its
// re-posts come every 400 ms until it does): answer again. Sooner, the repeat crossed our READY.
const READY_REPEAT_AFTER_MS = 1000;
// A refused workflow request answers with a failed snapshot carrying this id.
const REFUSED_WORKFLOW_ID = 'failed';
// GET_VIEWER's error for a signed-out viewer (the platform's words).
const SIGNED_OUT_VIEWER = 'viewer read requires an authenticated viewer';
// GET_VIEWER's scope: consent-gated, so a signed-in viewer's first token lacks it.
const VIEWER_SCOPE = 'user:read:self';
// What the host answers when the viewer cancels its publish dialog (the platform's words).
const PUBLISH_CANCELED = 'publish canceled';
const PURCHASE_PATH = '/api/v1/blocks/goods/purchase';
const ENTITLEMENTS_PATH = '/api/v1/blocks/entitlements';

/**
 * The code of a refusal's `error`: a bare word is a code; a sentence is not.
 * @param {string} error
 */
function refusalCode(error) {
  if (error === PUBLISH_CANCELED) return 'CANCELED';
  if (/^[A-Za-z][A-Za-z0-9_-]*$/.test(error)) return error;
  const prefix = /^([A-Z][A-Z0-9_]*):/.exec(error);
  return prefix ? prefix[1] : 'REFUSED';
}

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

/**
 * @param {Record<string, unknown>} payload
 * @param {string} key
 * @param {unknown} value added when it is a non-empty string
 */
function withString(payload, key, value) {
  return typeof value === 'string' && value ? { ...payload, [key]: value } : payload;
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
  /** @type {Set<(push: ImageScanResolved) => void>} */
  const scanListeners = new Set();
  // Requests in flight, by requestId: the host's reply echoes it.
  /** @type {Map<string, (payload: Record<string, any>) => void>} */
  const pending = new Map();
  /** @type {(init: BlockInit) => void} */
  let initArrived = () => {};
  /** @type {Promise<BlockInit>} */
  const whenInit = new Promise((resolve) => {
    initArrived = resolve;
  });
  /** @type {'waiting' | 'starting' | 'ready' | 'failed'} */
  let phase = 'waiting';
  // Learnt from the first BLOCK_INIT; until then nothing secret is sent.
  /** @type {string | null} */
  let hostOrigin = null;
  let requestCount = 0;
  // When BLOCK_READY last went out: a BLOCK_INIT re-post crossing it gets no second READY.
  let readySentAt = 0;
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
    readySentAt = Date.now();
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
    initArrived(init);
    // Only `blockkit dev` sends apiBaseUrl: there the bridge is also window.blockkit,
    // so the helpers can be tried from the devtools console of the block's frame.
    if (init.apiBaseUrl) /** @type {any} */ (globalThis).blockkit = bridge;
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
    // The host re-posts BLOCK_INIT until it hears BLOCK_READY, so a repeat means our answer
    // is still on its way (one posted as we sent READY), was lost (answer again, once the host
    // has had time to hear the first), or is still being prepared (wait).
    if (sameInstance && phase === 'ready') {
      if (Date.now() - readySentAt >= READY_REPEAT_AFTER_MS) sendReady();
      return;
    }
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
      case 'THEME_CHANGE':
        applyTheme(payload.theme);
        return update({ theme: payload.theme ?? null });
      case 'ROUTE_CHANGED':
        return update({ subPath: payload.subPath ?? null });
      case 'SUSPEND':
        return update({ suspended: true });
      case 'RESUME':
        return update({ suspended: false });
      case 'IMAGE_SCAN_RESOLVED':
        // A push, not a reply: it carries the upload request's id, whose reply came already.
        return scanListeners.forEach((listener) => listener(/** @type {ImageScanResolved} */ (payload)));
      default: {
        // A reply (TOKEN_REFRESH_RESPONSE, VIEWER_RESULT, ...): it echoes its request's id.
        const settle = typeof payload.requestId === 'string' ? pending.get(payload.requestId) : undefined;
        if (settle) settle(payload);
      }
    }
  }

  function nextRequestId() {
    requestCount += 1;
    return `${BRIDGE_ID}:${Date.now().toString(36)}:${requestCount}`;
  }

  /**
   * Post a request and resolve with its reply's payload (requestId removed).
   * @param {string} type
   * @param {Record<string, unknown>} payload
   * @param {number} timeoutMs 0: no time limit
   * @returns {Promise<Record<string, any>>}
   */
  function send(type, payload, timeoutMs) {
    const requestId = nextRequestId();
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              pending.delete(requestId);
              reject(new BridgeError('TIMEOUT', `the host did not answer ${type} within ${timeoutMs} ms`));
            }, timeoutMs)
          : undefined;
      pending.set(requestId, (reply) => {
        clearTimeout(timer);
        pending.delete(requestId);
        const answer = { ...reply };
        delete answer.requestId;
        resolve(answer);
      });
      post(type, { ...payload, requestId });
    });
  }

  /**
   * A request once BLOCK_INIT has come (so it goes to the pinned host origin only):
   * refused at once in a preview, and a refusal ({ok: false, error} or {error})
   * becomes a BridgeError.
   * @param {string} type
   * @param {Record<string, unknown>} [payload]
   * @param {RequestOptions} [options]
   */
  async function request(type, payload = {}, options = {}) {
    const init = state.init ?? (await whenInit);
    if (init.standalone) throw new BridgeError('NO_HOST', `no host frames this block, so nobody answers ${type}`);
    const reply = await send(type, payload, options.timeoutMs ?? (DIALOG_MESSAGES.has(type) ? DIALOG_TIMEOUT_MS : REQUEST_TIMEOUT_MS));
    if (reply.ok === false || typeof reply.error === 'string') {
      const error = String(reply.error ?? 'REFUSED');
      throw new BridgeError(refusalCode(error), `${type} refused: ${reply.message ?? error}`, reply);
    }
    return reply;
  }

  /**
   * @param {number} [timeoutMs]
   * @returns {Promise<BlockToken>}
   */
  function requestToken(timeoutMs = REQUEST_TIMEOUT_MS) {
    return send('REQUEST_TOKEN', {}, timeoutMs).then((reply) => {
      const token = /** @type {BlockToken} */ (reply.token);
      setToken(token);
      return token;
    });
  }

  async function getToken() {
    const token = state.token;
    if (token && Date.parse(token.expiresAt) - Date.now() > TOKEN_MARGIN_MS) return token;
    return requestToken();
  }

  async function getViewer() {
    const init = state.init ?? (await whenInit);
    // The model-slot host does not bridge GET_VIEWER (it would never answer);
    // BLOCK_INIT's viewer, deprecated but still sent, says the same there.
    if (init.standalone || init.context?.slotId !== PAGE_SLOT) return /** @type {Viewer | null} */ (init.viewer ?? null);
    // A signed-in viewer's first token lacks user:read:self until the viewer grants it (requestConsent):
    // GET_VIEWER would be refused, and BLOCK_INIT's viewer says who it is meanwhile.
    if (init.viewer && !hasScope(VIEWER_SCOPE)) return /** @type {Viewer | null} */ (init.viewer);
    try {
      const reply = await request('GET_VIEWER');
      return /** @type {Viewer | null} */ (reply.viewer ?? null);
    } catch (error) {
      // A signed-out viewer is an error reply, not {viewer: null}; BLOCK_INIT's viewer is
      // null then (a signed-out token holds no user:read:self, so that error may come first).
      const signedOut = error instanceof BridgeError && (error.reply?.error === SIGNED_OUT_VIEWER || init.viewer === null);
      if (signedOut) return null;
      throw error;
    }
  }

  // ---- consent and sign-in (fire-and-forget: the host sends no reply) -------------------------------
  /**
   * Whether the token the block holds carries `scope` (a gated scope arrives once the viewer grants it).
   * @param {string} scope
   */
  function hasScope(scope) {
    return Boolean(state.token?.scopes?.includes(scope));
  }

  /**
   * Ask the host to show its consent step for the scopes the token lacks (a signed-in viewer's first token
   * holds only the consent-exempt ones). The host asks for what it withheld, whatever `scopes` names; on
   * Allow a TOKEN_REFRESH brings them (subscribe, then retry); on "Not now" nothing comes.
   * @param {string[]} [scopes]
   */
  function requestConsent(scopes) {
    post('REQUEST_CONSENT', scopes ? { scopes } : {});
  }

  /**
   * @param {string[]} scopes
   * @param {number} [timeoutMs]
   * @returns {Promise<boolean>}
   */
  function ensureScopes(scopes, timeoutMs = CONSENT_WAIT_MS) {
    if (scopes.every(hasScope)) return Promise.resolve(true);
    requestConsent(scopes);
    return new Promise((resolve) => {
      /** @type {() => boolean} */
      let stop = () => false;
      const timer = setTimeout(() => {
        stop();
        resolve(false);
      }, timeoutMs);
      stop = () => listeners.delete(check);
      function check() {
        if (!scopes.every(hasScope)) return;
        clearTimeout(timer);
        stop();
        resolve(true);
      }
      listeners.add(check);
    });
  }

  /** @param {string} [returnUrl] a same-origin path to come back to */
  function requestSignIn(returnUrl) {
    post('REQUEST_SIGN_IN', returnUrl ? { returnUrl } : {});
  }

  function apiBaseUrl() {
    return (state.init?.apiBaseUrl ?? PLATFORM_API_BASE).replace(/\/+$/, '');
  }

  /**
   * @param {string} path e.g. "/api/v1/blocks/models?limit=3"
   * @param {RequestInit} [options]
   */
  async function fetchApi(path, options = {}) {
    const init = state.init ?? (await whenInit);
    if (init.standalone) throw new BridgeError('NO_HOST', 'a preview has no token to call the API with');
    const token = await getToken();
    const headers = new Headers(options.headers);
    headers.set('Authorization', `Bearer ${token.raw}`);
    return fetch(`${apiBaseUrl()}${path}`, { ...options, headers });
  }

  /**
   * The reply's snapshot; a failed snapshot of a refused request becomes a BridgeError
   * (a workflow that ran and failed is a snapshot with its own id and status "failed").
   * @param {string} type
   * @param {Record<string, any>} reply
   * @returns {WorkflowSnapshot}
   */
  function snapshotOf(type, reply) {
    const snapshot = reply.snapshot;
    if (!snapshot || typeof snapshot !== 'object') throw new BridgeError('BAD_REPLY', `${type}: the reply has no snapshot`, reply);
    if (snapshot.workflowId === REFUSED_WORKFLOW_ID) {
      throw new BridgeError('WORKFLOW_REFUSED', `${type} refused: ${snapshot.error ?? 'failed'}`, reply);
    }
    return snapshot;
  }

  /**
   * @param {string} type
   * @param {Record<string, unknown>} payload
   */
  function workflowRequest(type, payload) {
    return request(type, payload).then((reply) => snapshotOf(type, reply));
  }

  /**
   * A platform route answering JSON; a refusal ({ok: false, error, reason?} or an HTTP error)
   * becomes a BridgeError coded by its reason, else HTTP_<status>.
   * @param {string} path
   * @param {RequestInit} [options]
   */
  async function callApi(path, options) {
    const response = await fetchApi(path, options);
    /** @type {any} */
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok || body?.ok === false) {
      const code = typeof body?.reason === 'string' ? body.reason : `HTTP_${response.status}`;
      throw new BridgeError(code, `${path}: ${body?.error ?? response.statusText ?? response.status}`, body ?? undefined);
    }
    return body;
  }

  /**
   * @param {string} goodId
   * @param {PurchaseOptions} [options]
   * @returns {Promise<Purchase>}
   */
  function purchaseGood(goodId, options = {}) {
    const body = { goodId, ...options };
    return callApi(PURCHASE_PATH, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  }

  /**
   * @param {string} workflowId
   * @param {WaitOptions} [options]
   */
  async function waitForWorkflow(workflowId, options = {}) {
    const interval = options.intervalMs ?? POLL_INTERVAL_MS;
    const limit = options.timeoutMs ?? WAIT_TIMEOUT_MS;
    const started = Date.now();
    for (;;) {
      const snapshot = await workflowRequest('POLL_WORKFLOW', { workflowId });
      options.onStatus?.(snapshot);
      if (FINISHED_STATUSES.includes(snapshot.status)) return snapshot;
      if (limit > 0 && Date.now() - started > limit) {
        throw new BridgeError('TIMEOUT', `workflow ${workflowId} is still ${snapshot.status} after ${limit} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  }

  applyTheme(readFragmentHint()?.theme);
  window.addEventListener('message', onMessage);
  if (window.parent === window) {
    // Opened in a tab, not framed by a host: render a preview so `dev` shows something.
    start(standaloneInit(options.slot ?? PAGE_SLOT));
  } else {
    post('BLOCK_HELLO', { bridge: BRIDGE_ID });
  }

  /** @type {Bridge} */
  const bridge = {
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
    request,
    getViewer,
    hasScope,
    requestConsent,
    ensureScopes,
    requestSignIn,
    apiBaseUrl,
    fetchApi,
    purchaseGood,
    getEntitlements: () => callApi(ENTITLEMENTS_PATH).then((body) => ({ entitlements: body?.entitlements ?? [] })),
    submitWorkflow: (body) => workflowRequest('SUBMIT_WORKFLOW', { body }),
    estimateWorkflow: (body) => workflowRequest('ESTIMATE_WORKFLOW', { body }),
    pollWorkflow: (workflowId) => workflowRequest('POLL_WORKFLOW', { workflowId }),
    cancelWorkflow: (workflowId) => workflowRequest('CANCEL_WORKFLOW', { workflowId }),
    waitForWorkflow,
    storageGet: (key) => request('APP_STORAGE_GET', { key }).then((reply) => reply.value ?? null),
    storageSet: (key, value) => request('APP_STORAGE_SET', { key, value }),
    storageDelete: (key) => request('APP_STORAGE_DELETE', { key }),
    // The host's pickers and upload resolve the viewer's choice, or null when the viewer closed them
    // (the platform answers a dismissal with a bare {requestId}).
    pickCheckpoint: (options = {}) =>
      request('OPEN_CHECKPOINT_PICKER', withString({}, 'baseModelGroup', options.baseModelGroup)).then((reply) => reply.selected ?? null),
    pickResource: (resourceType, options = {}) =>
      request('OPEN_RESOURCE_PICKER', withString({ resourceType }, 'baseModelGroup', options.baseModelGroup)).then((reply) => reply.selected ?? null),
    uploadImage: (options = {}) =>
      request('OPEN_IMAGE_UPLOAD', {
        ...(options.purpose ? { purpose: options.purpose } : {}),
        ...(options.asyncScan ? { asyncScan: true } : {}),
      }).then((reply) => reply.selected ?? null),
    onImageScanResolved(listener) {
      scanListeners.add(listener);
      return () => scanListeners.delete(listener);
    },
    saveImage: (target, filename) =>
      request('SAVE_IMAGE', { ...target, ...(filename ? { filename } : {}) }).then(() => undefined),
    getWildcardPack: (modelVersionId) => request('GET_WILDCARD_PACK', { modelVersionId }).then((reply) => reply.pack),
    setUserCheckpoint: (versionId) => request('SET_USER_CHECKPOINT', { versionId }).then(() => undefined),
    publishOutputs: (workflowId, imageIndexes) =>
      request('PUBLISH_GENERATION_OUTPUTS', { workflowId, ...(imageIndexes ? { imageIndexes } : {}) })
        .then((reply) => reply.result?.imageIds ?? []),
  };
  return bridge;
}
