/*
 * blockkit dev: the host side of the block bridge (PLATFORM.md §6).
 *
 * What needs the DOM or a timer lives here: the sandboxed iframe, the
 * BLOCK_INIT re-post loop, give-up, retry and collapse, resize, the controls
 * and the live trace panel. What can be judged without them lives on the host
 * server: every inbound message goes to /api/inbound, which checks it against
 * the contract, writes it to the trace file and says what to reply.
 */
(function () {
  "use strict";

  // ---- the run's key ----------------------------------------------------------------------
  // blockkit dev prints this page's URL with the run's key in the fragment (#key=...), which no
  // request carries. It is kept in this tab's sessionStorage (this origin's only: a reload, or a
  // NAVIGATE and a reload, still has it), taken out of the address bar, and sent as a header with
  // every API call: the API mints block tokens, and answers no other process of the machine.
  var KEY_HEADER = "x-blockkit-dev-key";
  var KEY_STORE = "blockkit-dev-key";
  var devKey = (function () {
    var match = /(?:^#|&)key=([^&]*)/.exec(window.location.hash);
    var key = null;
    if (match) {
      key = decodeURIComponent(match[1]);
      try { window.sessionStorage.setItem(KEY_STORE, key); } catch (e) { /* storage off: this load only */ }
      var rest = window.location.hash.replace(/(^#|&)key=[^&]*/, "$1").replace(/^#&?$/, "");
      window.history.replaceState(window.history.state, "", window.location.pathname + window.location.search + rest);
    } else {
      try { key = window.sessionStorage.getItem(KEY_STORE); } catch (e) { key = null; }
    }
    return key || "";
  })();

  function apiHeaders() {
    var headers = { "content-type": "application/json" };
    headers[KEY_HEADER] = devKey;
    return headers;
  }

  var boot = JSON.parse(document.getElementById("blockkit-boot").textContent);
  fetch("/api/page", { method: "POST", headers: apiHeaders(), body: JSON.stringify({ subPath: boot.subPath }) })
    .then(function (response) {
      return response.json().then(function (answer) {
        if (!response.ok) throw new Error(answer && answer.error ? answer.error : "the dev host answered " + response.status);
        return answer;
      });
    })
    .then(run, refused);

  function refused(error) {
    var status = document.getElementById("status");
    status.setAttribute("data-state", "failed");
    status.textContent = "not started";
    var stage = document.getElementById("stage");
    stage.textContent = "";
    var box = document.createElement("div");
    box.className = "refused";
    box.id = "refused";
    box.setAttribute("role", "alert");
    box.textContent = String(error && error.message ? error.message : error);
    stage.appendChild(box);
  }

  // The page itself, once the host server gave its configuration (kept at the IIFE's indentation).
  function run(config) {
  var T = config.timings;
  var isSlot = config.surface.kind === "slot";
  var MAX_PANEL_ROWS = 2000;

  var state = {
    outcome: "pending", // pending | ready | collapsed | failed
    attempt: 0,
    waiting: false, // between a mount and its give-up
    ready: false,
    theme: config.theme,
    iframe: null,
    mountAt: null,
    firstMountAt: null,
    handshakeMs: null,
    height: null,
    initSent: false, // a BLOCK_INIT went to this mount's frame
    helloHandled: false, // BLOCK_HELLO speeds up the first BLOCK_INIT of a mount only
    autoRetries: 0, // the page's automatic retries spent (a manual one spends none)
    subPath: config.initPayload.context.subPath, // the page's; undefined on a slot
    timers: {},
    pending: {}, // requestId -> {type, timer}
    violations: [],
    requests: [] // the block's own requests to the local platform, as the panel shows them
  };

  // ---- reporting to the host server ------------------------------------
  // One queue, so the trace file keeps the order in which things happened.
  var queue = Promise.resolve();

  function post(path, body) {
    var result = queue.then(function () {
      return fetch(path, {
        method: "POST",
        headers: apiHeaders(),
        body: JSON.stringify(body)
      }).then(function (response) {
        return response.json();
      });
    });
    queue = result.catch(function () {});
    return result;
  }

  function now() {
    return Math.round(performance.now() * 10) / 10;
  }

  function stamp(event) {
    if (event.t == null) event.t = now();
    event.attempt = state.attempt;
    event.pageId = config.pageId;
    return event;
  }

  // What the host posted to the block waits here briefly: the block's next request, which
  // usually follows at once, carries it to the server in the same POST (in order, ahead of the
  // request), so a bridge round trip costs one POST instead of two. Anything else goes at once.
  var OUTBOX_MS = 30;
  var UPLOAD_MAX_CHARS = 1000 * 1000; // a data URL, under the host API's 1 MiB body limit
  var OUTBOX_PIGGYBACK_CHARS = 256 * 1024; // well under the host API's 1 MiB body limit
  var outbox = [];
  var outboxChars = 0;
  var outboxTimer = null;

  function record(event) {
    stamp(event);
    panel.add(event);
    // What the host posted, what it dropped and what went unanswered wait in the outbox: a flood
    // of dropped messages costs one POST, and never delays the answer to the next request.
    if ((event.kind === "message" && event.dir === "out") || event.dropped || event.kind === "unanswered") {
      outbox.push(event);
      outboxChars += JSON.stringify(event).length;
      if (outboxChars > OUTBOX_PIGGYBACK_CHARS) sendOutbox();
      else if (outboxTimer === null) outboxTimer = setTimeout(sendOutbox, OUTBOX_MS);
      return Promise.resolve();
    }
    return post("/api/events", { events: takeOutbox().concat([event]) }).then(showViolations, reportFailure);
  }

  function takeOutbox() {
    clearTimeout(outboxTimer);
    outboxTimer = null;
    var events = outbox;
    outbox = [];
    outboxChars = 0;
    return events;
  }

  function sendOutbox() {
    var events = takeOutbox();
    if (events.length) post("/api/events", { events: events }).then(showViolations, reportFailure);
  }

  // The outbox to send ahead of an inbound message: in the same POST when both together stay
  // small, so a large message from the block never fails the body limit for the outbox's sake.
  function outboxForInbound(messageChars) {
    if (outboxChars + messageChars > OUTBOX_PIGGYBACK_CHARS) {
      sendOutbox();
      return [];
    }
    return takeOutbox();
  }

  function reportFailure(error) {
    // A warning, not an error: --check counts console errors as the block's.
    console.warn("blockkit dev: the host server did not take a trace event:", error);
  }

  // ---- host -> block -----------------------------------------------------
  function send(type, payload, why) {
    var frame = state.iframe;
    if (!frame || !frame.contentWindow) return;
    var message = payload === undefined ? { type: type } : { type: type, payload: payload };
    // A sandbox without allow-same-origin gives the block an opaque origin,
    // which no targetOrigin but "*" can name.
    frame.contentWindow.postMessage(message, "*");
    if (type === "BLOCK_INIT") state.initSent = true;
    if (payload && typeof payload.requestId === "string") settle(payload.requestId);
    var event = { kind: "message", dir: "out", type: type, data: message };
    if (why) event.why = why;
    record(event);
  }

  function initPayload() {
    var payload = JSON.parse(JSON.stringify(config.initPayload));
    payload.theme = state.theme;
    // Each post is built afresh, as the platform's is: the current theme and sub-path.
    payload.context.theme = state.theme;
    if (!isSlot) payload.context.subPath = state.subPath;
    return payload;
  }

  function postInit(why) {
    if (!state.ready && state.waiting) send("BLOCK_INIT", initPayload(), why);
  }

  // ---- mounting, give-up, retry --------------------------------------------
  function clearTimers() {
    Object.keys(state.timers).forEach(function (name) {
      clearTimeout(state.timers[name]);
      clearInterval(state.timers[name]);
    });
    state.timers = {};
  }

  function stopRepost() {
    clearInterval(state.timers.repost);
    delete state.timers.repost;
  }

  // Whether the frame shows from mount (the spec's bootSkeleton, full-page host only). It stays
  // inert until BLOCK_READY either way, as the platform's always is.
  var showFromMount = !isSlot && config.iframe.bootSkeleton === true;

  function mount() {
    clearTimers();
    state.attempt += 1;
    state.ready = false;
    state.waiting = true;
    state.initSent = false;
    state.helloHandled = false;
    state.outcome = "pending";
    state.height = null;
    stage.reset();

    var frame = document.createElement("iframe");
    // The attributes are set before the frame navigates: sandbox flags apply per navigation.
    frame.setAttribute("sandbox", config.iframe.sandbox);
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.setAttribute("title", config.name);
    frame.id = "block-frame";
    // Invisible and inert until BLOCK_READY (the platform's opacity 0, pointer-events none).
    frame.className = showFromMount ? "booting boot-skeleton" : "booting";
    if (isSlot) {
      frame.style.height = config.iframe.minHeight + "px";
      state.height = config.iframe.minHeight;
    }
    // The bare URL: the platform puts no init fragment on it.
    frame.src = config.blockUrl;
    var loads = 0;
    frame.addEventListener("load", function () {
      if (state.iframe !== frame) return;
      loads += 1;
      if (loads === 1) {
        record({ kind: "lifecycle", event: "iframe-load" });
        return;
      }
      // A new document in the same frame (the block navigated or reloaded itself, or a dev
      // server's full reload): the platform's host has no load handler, so nothing follows.
      record({
        kind: "lifecycle",
        event: "frame-navigated",
        afterReady: state.ready,
        note: state.ready
          ? "the platform sends the new document no BLOCK_INIT; press Reload block to remount it"
          : "BLOCK_INIT re-posts go on until BLOCK_READY"
      });
      if (!state.ready) return;
      // A reload the dev server behind --proxy asked for (an edit it could not hot-swap) has no
      // platform counterpart: remount the block, as a new version of it would be mounted.
      post("/api/frame-navigated", {}).then(function (answer) {
        if (!answer || !answer.devServer || state.iframe !== frame) return;
        record({ kind: "lifecycle", event: "block-reloaded", reason: "the dev server reloaded the block" });
        restart();
      }, reportFailure);
    });
    stage.frameHost.appendChild(frame);
    stage.showOverlay(!showFromMount, state.attempt > 1);
    state.iframe = frame;
    state.mountAt = now();
    if (state.firstMountAt === null) state.firstMountAt = state.mountAt;
    record({
      kind: "lifecycle",
      event: "mount",
      t: state.mountAt,
      src: frame.src,
      sandbox: frame.getAttribute("sandbox")
    });
    // As the platform's init controller: one BLOCK_INIT at once (without waiting for the
    // frame's load), then one every re-post interval, and the give-up armed from now.
    postInit("mount");
    startRepost();
    state.timers.giveUp = setTimeout(giveUp, T.ready_timeout_ms);
    setStatus("pending", "waiting for BLOCK_READY (attempt " + state.attempt + ")");
  }

  function startRepost() {
    if (state.timers.repost || state.ready) return;
    state.timers.repost = setInterval(function () {
      postInit("repost");
    }, T.init_repost_ms);
  }

  function onHello() {
    // An accelerator, honoured once per mount: a chatty frame cannot make the host post more.
    if (state.helloHandled) {
      record({ kind: "lifecycle", event: "hello-ignored", reason: "only a mount's first BLOCK_HELLO brings a BLOCK_INIT" });
      return;
    }
    state.helloHandled = true;
    postInit("hello");
  }

  function giveUp() {
    fail("timeout");
  }

  // The mount failed: no BLOCK_READY in time ("timeout"), or BLOCK_ERROR {fatal: true} ("fatal",
  // before or after READY). A slot collapses. A page shows its failure card and, while its
  // automatic retries last, remounts the frame after each backoff with the card up meanwhile.
  function fail(reason, message) {
    clearTimers();
    state.waiting = false;
    state.ready = false;
    if (reason === "fatal") {
      record({ kind: "lifecycle", event: "fatal-error", message: message === undefined ? null : message });
    } else {
      record({ kind: "lifecycle", event: "give-up", waitedMs: round(now() - state.mountAt) });
    }
    var why = reason === "fatal"
      ? "the block sent BLOCK_ERROR {fatal: true}"
      : "no BLOCK_READY within " + seconds(T.ready_timeout_ms);
    if (isSlot) {
      stage.collapse(why);
      state.outcome = "collapsed";
      record({ kind: "lifecycle", event: "collapse", reason: reason });
      setStatus("failed", why + ": the slot collapsed");
      return;
    }
    var delays = T.page_retry_delays_ms;
    if (state.autoRetries < delays.length) {
      var delay = delays[state.autoRetries];
      stage.showFailureCard(reason, message, state.attempt, { attempt: state.autoRetries + 1, of: delays.length });
      state.outcome = "pending";
      record({ kind: "lifecycle", event: "retry-scheduled", delayMs: delay, reason: reason });
      setStatus("pending", why + "; retrying in " + seconds(delay));
      state.timers.retry = setTimeout(function () {
        state.autoRetries += 1;
        mount();
      }, delay);
      return;
    }
    stage.showFailureCard(reason, message, state.attempt, null);
    state.outcome = "failed";
    record({ kind: "lifecycle", event: "failure-card", attempts: state.attempt, reason: reason });
    setStatus("failed", why + " after " + state.attempt + " attempts: failure card");
  }

  // SUSPEND when the host unmounts a block it initialised (the platform's unmount effect).
  function suspendOnUnmount() {
    if (state.initSent && state.iframe) send("SUSPEND", undefined, "unmount");
  }

  // "Reload block": the host unmounts and mounts the block afresh, with a fresh retry budget.
  function restart() {
    suspendOnUnmount();
    state.attempt = 0;
    state.autoRetries = 0;
    state.firstMountAt = null;
    state.handshakeMs = null;
    mount();
  }

  // The failure card's button: one more attempt, which spends none of the automatic ones.
  function manualRetry() {
    mount();
  }

  // ---- the platform host's transport rules (blockkit/dev/transport.py) ----------
  var rules = config.transport;
  var handled = {};
  rules.handled.forEach(function (type) { handled[type] = true; });
  var recentTimes = [];
  var seenIds = new Map(); // requestId -> when it was seen (Date.now())

  // The id the host dedups on: payload.requestId when a non-empty string, else a top-level one.
  function dedupKey(data) {
    var payload = data.payload;
    if (payload && typeof payload === "object" && typeof payload.requestId === "string" && payload.requestId) {
      return payload.requestId;
    }
    return typeof data.requestId === "string" ? data.requestId : undefined;
  }

  // null: the message reaches its handler. Otherwise why the host dropped it ({reason, detail?}),
  // and the reply it sends instead, if any. In the platform's order, every drop before any cost.
  function transportVerdict(data, type, payload, atMs) {
    if (type === null || !handled[type]) return { reason: "not-handled" };
    var id = dedupKey(data);
    if (typeof id === "string") {
      var seenAt = seenIds.get(id);
      if (seenAt !== undefined && atMs - seenAt < rules.dedupWindowMs) {
        return { reason: "duplicate-request-id", detail: { requestId: id } };
      }
      if (seenIds.size >= rules.dedupMaxIds) seenIds.delete(seenIds.keys().next().value);
      seenIds.set(id, atMs);
      seenIds.forEach(function (when, key) {
        if (atMs - when >= rules.dedupWindowMs) seenIds.delete(key);
      });
    }
    recentTimes = recentTimes.filter(function (when) { return atMs - when < rules.rateWindowMs; });
    if (recentTimes.length >= rules.rateMax) return { reason: "rate-limited" };
    recentTimes.push(atMs);
    return handlerVerdict(type, payload);
  }

  function handlerVerdict(type, payload) {
    var requestId = payload && typeof payload.requestId === "string" ? payload.requestId : null;
    var rule = rules.requests[type];
    var gate = state.ready ? null : rules.beforeReady[type];
    if (gate && gate.action === "reply") {
      if (requestId === null || (gate.idNonEmpty && requestId === "")) return { reason: "no-request-id" };
      var answer = { requestId: requestId };
      Object.keys(gate.payload).forEach(function (key) { answer[key] = gate.payload[key]; });
      return {
        reason: "before-ready",
        detail: { reply: gate.reply, payload: gate.payload },
        reply: { type: gate.reply, payload: answer }
      };
    }
    if (gate) return { reason: "before-ready" };
    if (rule && (requestId === null || (rule.nonEmptyId && requestId === ""))) return { reason: "no-request-id" };
    return null;
  }

  // ---- block -> host ---------------------------------------------------------
  function describe(value) {
    var jsType = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    var data;
    var chars = 0;
    try {
      var text = JSON.stringify(value === undefined ? null : value);
      chars = text === undefined ? 0 : text.length;
      data = text === undefined ? undefined : JSON.parse(text);
    } catch (error) {
      jsType = "unserializable";
      data = String(value);
      chars = data.length;
    }
    return { jsType: jsType, data: data === undefined ? null : data, chars: chars };
  }

  window.addEventListener("message", function (event) {
    var frame = state.iframe;
    if (!frame || event.source !== frame.contentWindow) return;
    var t = now();
    var readyAtArrival = state.ready; // the platform's consent and sign-in steps open only once ready
    var described = describe(event.data);
    var data = described.data;
    var isObject = described.jsType === "object" && data !== null;
    var type = isObject && typeof data.type === "string" ? data.type : null;
    var payload = isObject && data.payload && typeof data.payload === "object" ? data.payload : null;

    var verdict = transportVerdict(isObject ? data : {}, type, payload, Date.now());
    if (verdict && described.chars + 4096 > config.apiBodyLimit) {
      // Too large for the host server to take: shown, neither traced nor awaited (as a passed one).
      panel.add({ kind: "lifecycle", event: "message-not-traced", reason: "larger than the host API's limit", t: t });
      console.warn("blockkit dev: a message from the block is too large to trace (" + described.chars + " characters)");
      if (verdict.reply) send(verdict.reply.type, verdict.reply.payload, "before-ready");
      return;
    }
    if (verdict) {
      var dropped = { kind: "message", dir: "in", type: type, jsType: described.jsType, data: data,
                      origin: event.origin, dropped: verdict.reason, t: t };
      if (verdict.detail) dropped.detail = verdict.detail;
      record(dropped);
      if (verdict.reason === "not-handled") {
        // No handler here, so no reply: a request that awaits one is reported unanswered.
        if (payload && typeof payload.requestId === "string") track(type, payload.requestId, t);
        if (type === "RESIZE_IFRAME") onResize(payload);
      }
      if (verdict.reply) send(verdict.reply.type, verdict.reply.payload, "before-ready");
      return;
    }

    panel.add(stamp({ kind: "message", dir: "in", type: type, jsType: described.jsType, data: data, t: t }));
    post("/api/inbound", {
      t: t,
      attempt: state.attempt,
      pageId: config.pageId,
      jsType: described.jsType,
      data: data,
      origin: event.origin,
      before: outboxForInbound(described.chars)
    }).then(function (result) {
      if (result && result.error) {
        // The host server would not take it (a message over its size limit): nothing was
        // judged or answered, so no reply is awaited either. A warning: --check counts
        // console errors as the block's.
        panel.add({ kind: "lifecycle", event: "message-not-traced", reason: result.error, t: t });
        console.warn("blockkit dev: the host server did not take a message from the block:", result.error);
        return;
      }
      showViolations(result);
      // The wait starts once the host has decided, so a busy trace queue is
      // never mistaken for a host that does not answer.
      var deliver = function () {
        if (payload && typeof payload.requestId === "string") track(type, payload.requestId, t);
        if (result.reply && state.iframe === frame) send(result.reply.type, result.reply.payload);
      };
      // --scenario slow: the reply waits (the host's wait for it starts when it is sent).
      if (result.reply && result.delayMs > 0) setTimeout(deliver, result.delayMs);
      else deliver();
      if (result.note) {
        panel.add({ kind: "lifecycle", event: "not-bridged", type: type, reason: result.note, t: t });
      }
      if ((result.consent || result.notice) && state.iframe === frame) consentStep(result, readyAtArrival);
      if (result.dialog && state.iframe === frame) {
        // The developer answers now: the request's wait is the developer's, not the host's.
        settle(result.dialog.requestId);
        var answerDialog = function (choice) {
          // The dialog's own id (the host's), not the block's requestId, names what is answered.
          post("/api/dialog", { dialogId: result.dialog.dialogId, choice: choice, pageId: config.pageId })
            .then(function (answer) {
              if (answer.reply && state.iframe === frame) send(answer.reply.type, answer.reply.payload);
              // Pushes that follow the reply (IMAGE_SCAN_RESOLVED after an asyncScan upload).
              (answer.pushes || []).forEach(function (push) {
                if (state.iframe === frame) send(push.type, push.payload);
              });
            }, reportFailure);
        };
        if (result.dialog.type === "SAVE_IMAGE") saveImage(result.dialog, answerDialog);
        else dialogs.open(result.dialog, answerDialog);
      }
    }, reportFailure);

    if (type === "BLOCK_HELLO") onHello();
    else if (type === "BLOCK_READY") onReady(payload, t);
    else if (type === "RESIZE_IFRAME") onResize(payload);
    else if (type === "BLOCK_ERROR") onBlockError(payload);
    else if (type === "NAVIGATE") onNavigate(payload);
    else if (type === "REQUEST_SIGN_IN") signInStep(readyAtArrival);
  });

  function track(type, requestId, receivedAt) {
    settle(requestId);
    state.pending[requestId] = {
      type: type,
      timer: setTimeout(function () {
        delete state.pending[requestId];
        record({
          kind: "unanswered",
          type: type,
          requestId: requestId,
          waitedMs: round(now() - receivedAt)
        });
      }, T.request_reply_timeout_ms)
    };
  }

  function settle(requestId) {
    var pending = state.pending[requestId];
    if (pending) {
      clearTimeout(pending.timer);
      delete state.pending[requestId];
    }
  }

  function onReady(payload, t) {
    if (state.ready) {
      record({ kind: "lifecycle", event: "ready-again",
               reason: "the handshake is done, so a repeat is ignored, as the platform's host ignores it (a block that" +
                       " answers each BLOCK_INIT re-post, or a re-render that runs its ready call again, sends one);" +
                       " harmless" });
      return;
    }
    if (!state.waiting) {
      record({ kind: "lifecycle", event: "ready-too-late",
               reason: "the host stopped waiting for this mount (it gave up or failed), so the BLOCK_READY is ignored" });
      return;
    }
    clearTimeout(state.timers.giveUp);
    stopRepost();
    state.ready = true;
    state.waiting = false;
    state.outcome = "ready";
    state.handshakeMs = round(t - state.firstMountAt);
    state.iframe.classList.remove("booting", "boot-skeleton");
    stage.hideOverlay();
    var height = payload && typeof payload.height === "number" && isFinite(payload.height) ? payload.height : null;
    var event = {
      kind: "lifecycle",
      event: "ready",
      handshakeMs: state.handshakeMs,
      attemptMs: round(t - state.mountAt),
      requestedHeight: height
    };
    // The spec: the slot takes BLOCK_READY's height only when iframe.resizable (the platform always).
    if (isSlot && config.iframe.resizable && height !== null) event.appliedHeight = applyHeight(height);
    record(event);
    var retries = state.attempt > 1 ? " (attempt " + state.attempt + ")" : "";
    setStatus("ready", "BLOCK_READY after " + Math.round(state.handshakeMs) + " ms" + retries);
    // The page host tells a block that just became ready where it is (its route effect runs
    // on every change of status to ready, as on every change of subPath).
    if (!isSlot) send("ROUTE_CHANGED", { subPath: state.subPath }, "ready");
  }

  function onBlockError(payload) {
    // A non-fatal BLOCK_ERROR changes nothing on the platform; a fatal one ends a loading or ready mount.
    if (!payload || payload.fatal !== true) return;
    if (!state.waiting && !state.ready) return;
    fail("fatal", typeof payload.message === "string" ? payload.message : undefined);
  }

  // ---- the page's route: NAVIGATE, ROUTE_CHANGED, the host URL ---------------------
  var slug = isSlot ? null : String(config.initPayload.context.slug);
  var routePrefix = isSlot ? null : "/apps/run/" + encodeURIComponent(slug);

  function onNavigate(payload) {
    // Only once ready (the before-ready gate dropped earlier ones); never on a slot (no handler).
    var raw = payload ? payload.path : undefined;
    var reason = null;
    var cleaned = typeof raw === "string" ? raw.replace(/^\/+/, "") : null;
    if (cleaned === null) reason = "payload.path is not a string";
    else if (cleaned.indexOf("//") >= 0 || cleaned.split("/").indexOf("..") >= 0) {
      reason = "the path has // or a .. segment: the platform navigates only within the app's page";
    }
    if (reason) {
      record({ kind: "lifecycle", event: "navigate-ignored", path: raw === undefined ? null : raw, reason: reason });
      return;
    }
    var target = routePrefix + (cleaned ? "/" + cleaned : "");
    // A shallow push: the page stays mounted, the URL follows (a reload lands there again).
    history.pushState({ blockkit: true }, "", target);
    record({ kind: "lifecycle", event: "navigate", path: raw, url: location.pathname + location.search });
    routeChanged();
  }

  function decodeSegment(segment) {
    try {
      return decodeURIComponent(segment);
    } catch (error) {
      return segment;
    }
  }

  // The sub-path the host URL says: what follows /apps/run/<slug>/, without slashes at its ends.
  function currentSubPath() {
    var path = location.pathname;
    if (path !== routePrefix && path.indexOf(routePrefix + "/") !== 0) return config.initPayload.context.subPath;
    return path.slice(routePrefix.length).split("/").filter(Boolean).map(decodeSegment).join("/");
  }

  function routeChanged() {
    var subPath = currentSubPath();
    if (subPath === state.subPath) return;
    state.subPath = subPath;
    stage.showPath(subPath);
    if (state.ready && state.initSent) send("ROUTE_CHANGED", { subPath: subPath });
  }

  if (!isSlot) window.addEventListener("popstate", routeChanged);

  // ---- SUSPEND / RESUME ----------------------------------------------------------------
  document.addEventListener("visibilitychange", function () {
    if (!state.ready) return;
    send(document.visibilityState === "visible" ? "RESUME" : "SUSPEND", undefined, "visibility");
  });

  window.addEventListener("pagehide", function () {
    suspendOnUnmount();
    // The trace gets it too, if the page lives long enough to send it.
    var events = takeOutbox();
    if (events.length) {
      fetch("/api/events", { method: "POST", keepalive: true, headers: apiHeaders(),
                             body: JSON.stringify({ events: events }) }).catch(function () {});
    }
  });

  function onResize(payload) {
    var requested = payload ? payload.height : undefined;
    var reason = null;
    if (!isSlot) reason = "the page host ignores RESIZE_IFRAME";
    else if (!state.ready) reason = "before BLOCK_READY: the slot host ignores RESIZE_IFRAME until then";
    // The spec: a slot resizes only when iframe.resizable (the platform does not read it).
    else if (!config.iframe.resizable) reason = "iframe.resizable is false";
    else if (typeof requested !== "number" || !isFinite(requested)) reason = "payload.height is not a number";
    else if (requested <= 0) reason = "payload.height is 0 or less";
    if (reason) {
      record({ kind: "lifecycle", event: "resize-ignored", requestedHeight: requested, reason: reason });
      return;
    }
    var applied = applyHeight(requested);
    record({ kind: "lifecycle", event: "resize-applied", requestedHeight: requested, appliedHeight: applied });
  }

  // The platform's slot: a height of 0 or less is ignored; the rest is clamped to the manifest's
  // minimum and maximum, and to 8,000 px whatever the maximum (IframeHost's hard ceiling).
  var HARD_HEIGHT_CEILING = 8000;

  function clampHeight(height) {
    var clamped = Math.max(config.iframe.minHeight, height);
    if (config.iframe.maxHeight !== null) clamped = Math.min(config.iframe.maxHeight, clamped);
    return Math.min(HARD_HEIGHT_CEILING, clamped);
  }

  function applyHeight(height) {
    if (!(height > 0)) return null;
    var clamped = clampHeight(height);
    state.iframe.style.height = clamped + "px";
    state.height = clamped;
    return clamped;
  }

  // ---- controls ----------------------------------------------------------------
  function setTheme(theme) {
    state.theme = theme;
    document.documentElement.setAttribute("data-theme", theme);
    document.getElementById("theme-toggle").textContent = "Theme: " + theme;
  }

  function toggleTheme() {
    setTheme(state.theme === "dark" ? "light" : "dark");
    send("THEME_CHANGE", { theme: state.theme });
  }

  function pushToken(why) {
    return post("/api/token", { pageId: config.pageId }).then(function (result) {
      if (!result || result.error) {
        // No token of another kind stands in: the block keeps the one it has.
        panel.add({ kind: "lifecycle", event: "token-refused", reason: result && result.error, t: now() });
        console.warn("blockkit dev: no new token:", result && result.error);
        return;
      }
      // A later BLOCK_INIT (a retry, a reload) carries the newest token too.
      config.initPayload.token = result.token;
      send("TOKEN_REFRESH", { token: result.token }, why);
      scheduleTokenRefresh(result.refreshInMs);
    }, reportFailure);
  }

  // The platform's token hook mints again 2 minutes before the token expires (never sooner than
  // 30 s after a mint) and the host pushes what it got: one timer, set again after every mint.
  var tokenRefresh = { timer: null, inMs: null };
  function scheduleTokenRefresh(inMs) {
    clearTimeout(tokenRefresh.timer);
    tokenRefresh.timer = null;
    tokenRefresh.inMs = typeof inMs === "number" && isFinite(inMs) ? inMs : null;
    if (tokenRefresh.inMs === null) return;
    tokenRefresh.timer = setTimeout(function () { pushToken("expiry"); }, Math.max(0, tokenRefresh.inMs));
  }

  // ---- consent and sign-in: the platform's REQUEST_CONSENT and REQUEST_SIGN_IN steps ----------
  // Both are fire-and-forget: the block gets no reply. Consent: Allow records the grant in the local
  // platform and the host pushes TOKEN_REFRESH with the new token; "Not now" sends nothing.
  var consent = { granted: (config.consent || {}).granted || [], missing: (config.consent || {}).missingScopes || [] };

  function consentStep(result, ready) {
    if (!ready) {
      record({ kind: "lifecycle", event: "consent-dropped", reason: "before BLOCK_READY the platform opens no consent step" });
      return;
    }
    if (result.notice) {
      showNotice(result.notice);
      return;
    }
    var step = result.consent;
    var box = document.getElementById("host-dialog");
    var error = el("p", { class: "consent-error", hidden: "" });
    var allow = el("button", { type: "button", class: "consent-allow" }, ["Allow"]);
    var deny = el("button", { type: "button", class: "consent-deny" }, ["Not now"]);
    function close() { box.hidden = true; box.replaceChildren(); }
    deny.addEventListener("click", function () {
      close();
      post("/api/consent", { pageId: config.pageId, allow: false, t: now(), attempt: state.attempt }).catch(reportFailure);
    });
    allow.addEventListener("click", function () {
      allow.disabled = deny.disabled = true;
      post("/api/consent", { pageId: config.pageId, allow: true, t: now(), attempt: state.attempt }).then(function (answer) {
        if (!answer || answer.error || !answer.token) {
          error.textContent = (answer && answer.error) || "the grant did not go through";
          error.hidden = false;
          allow.disabled = deny.disabled = false;
          return;
        }
        close();
        consent.granted = consent.granted.concat(step.missingScopes);
        consent.missing = [];
        config.initPayload.token = answer.token;
        send("TOKEN_REFRESH", { token: answer.token }, "consent");
        scheduleTokenRefresh(answer.refreshInMs);
      }, reportFailure);
    });
    var name = step.appName || "This app";
    box.replaceChildren(el("div", { class: "dialog-card", role: "dialog", "data-type": "REQUEST_CONSENT" }, [
      el("h2", {}, [name + " needs permission"]),
      el("p", {}, ["To do that, " + name + " needs your permission to:"]),
      el("ul", { class: "consent-scopes" }, step.missingScopes.map(function (scope) {
        return el("li", {}, [el("code", {}, [scope])]);
      })),
      error,
      el("div", { class: "dialog-actions" }, [deny, allow])
    ]));
    box.hidden = false;
  }

  function showNotice(text) {
    var notice = document.getElementById("host-notice");
    notice.textContent = text;
    notice.hidden = false;
    clearTimeout(showNotice.timer);
    showNotice.timer = setTimeout(function () { notice.hidden = true; }, 6000);
  }

  // REQUEST_SIGN_IN: the platform opens its login popup once the block is ready. Here the step lists
  // the seeded users; signing in reloads the page with that viewer (a new instance, token and BLOCK_INIT).
  function signInStep(ready) {
    if (!ready) {
      record({ kind: "lifecycle", event: "sign-in-dropped", reason: "before BLOCK_READY the platform opens no sign-in step" });
      return;
    }
    var box = document.getElementById("host-dialog");
    var users = (config.users || []).filter(function (user) { return user.status === "active"; });
    var select = el("select", { id: "sign-in-user" }, users.map(function (user) {
      return el("option", { value: String(user.id) }, [user.label]);
    }));
    var cancel = el("button", { type: "button", class: "sign-in-cancel" }, ["Cancel"]);
    var go = el("button", { type: "button", class: "sign-in-confirm" }, ["Sign in"]);
    cancel.addEventListener("click", function () { box.hidden = true; box.replaceChildren(); });
    go.addEventListener("click", function () {
      post("/api/viewer", { userId: Number(select.value) }).then(function () { window.location.reload(); }, reportFailure);
    });
    box.replaceChildren(el("div", { class: "dialog-card", role: "dialog", "data-type": "REQUEST_SIGN_IN" }, [
      el("h2", {}, ["Sign in"]),
      el("p", { class: "muted" }, ["The block asks the viewer to sign in (the platform's login popup). Sign in as:"]),
      select,
      el("div", { class: "dialog-actions" }, [cancel, go])
    ]));
    box.hidden = false;
  }

  // ---- the stage: what the platform page around the block looks like -------------
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (name === "text") node.textContent = attrs[name];
      else node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function (child) {
      if (typeof child === "string") node.appendChild(document.createTextNode(child));
      else if (child) node.appendChild(child);
    });
    return node;
  }

  var stage = (function () {
    var root = document.getElementById("stage");
    var frameHost = el("div", { id: "frame-host", class: "frame-host" });
    var card = el("div", { id: "failure-card", class: "failure-card", hidden: "" }, [
      el("h3", { id: "failure-title", text: "This app couldn't load" }),
      el("p", { id: "failure-detail", class: "muted" }),
      el("p", { id: "failure-retrying", class: "muted" }),
      el("button", { type: "button", id: "failure-retry", text: "Try again" })
    ]);
    // The platform's launch state over the frame until BLOCK_READY.
    var overlay = el("div", { id: "boot-overlay", class: "boot-overlay", role: "status", hidden: "" });
    var pathText = null;
    var collapsedNote = el("p", { id: "collapsed-note", class: "dev-note", hidden: "" });
    var slotBox = null;
    var context = config.initPayload.context;

    if (isSlot) {
      root.className = "stage stage-slot slot-" + config.surface.slotId.replace(/[^a-z0-9]+/gi, "-");
      slotBox = el("div", { class: "slot", "data-slot": config.surface.slotId }, [
        el("div", { class: "slot-label", text: config.surface.slotId }),
        frameHost
      ]);
      var placeholder = function (cls, text) {
        return el("div", { class: "placeholder " + cls, text: text });
      };
      var main = el("div", { class: "model-main" }, [
        el("h1", { class: "model-title", text: String(context.modelName) }),
        el("div", { class: "muted", text: context.modelType + " · model " + context.modelId + " · version " + context.modelVersionId }),
        config.surface.slotId === "model.actions_extra" ? el("div", { class: "actions" }, [
          placeholder("button-like", "Download"), placeholder("button-like", "Like"), slotBox
        ]) : null,
        placeholder("gallery", "model images"),
        config.surface.slotId === "model.below_images" ? slotBox : null,
        placeholder("description", "model description")
      ]);
      var side = el("div", { class: "model-side" }, [
        config.surface.slotId === "model.sidebar_top" ? slotBox : null,
        placeholder("details", "model details")
      ]);
      root.appendChild(el("div", { class: "model-page" }, [main, side]));
      root.appendChild(collapsedNote);
    } else {
      root.className = "stage stage-page";
      var page = config.page || { title: config.name, path: "/" };
      pathText = el("span", { id: "page-path", class: "muted" });
      root.appendChild(el("div", { class: "page-bar" }, [
        el("span", { class: "page-title", text: page.title }),
        pathText
      ]));
      root.appendChild(frameHost);
    }
    root.appendChild(card);

    function showPath(subPath) {
      if (pathText) pathText.textContent = "/apps/run/" + context.slug + (subPath ? "/" + subPath : "");
    }
    showPath(state.subPath);

    return {
      frameHost: frameHost,
      showPath: showPath,
      reset: function () {
        frameHost.textContent = "";
        card.hidden = true;
        collapsedNote.hidden = true;
        if (slotBox) slotBox.hidden = false;
        frameHost.hidden = false;
      },
      showOverlay: function (shown, retrying) {
        overlay.textContent = (retrying ? "Retrying " : "Starting ") + config.name + "…";
        overlay.hidden = !shown;
        frameHost.appendChild(overlay);
      },
      hideOverlay: function () {
        overlay.hidden = true;
      },
      collapse: function (why) {
        if (slotBox) slotBox.hidden = true;
        collapsedNote.textContent = "dev: " + config.surface.slotId + " collapsed: " + why + ".";
        collapsedNote.hidden = false;
      },
      // reason "timeout" or "fatal"; retry: {attempt, of} while an automatic retry is pending.
      showFailureCard: function (reason, message, attempts, retry) {
        frameHost.textContent = "";
        frameHost.hidden = true;
        var plural = attempts === 1 ? " attempt" : " attempts";
        document.getElementById("failure-title").textContent =
          reason === "fatal" ? config.name + " failed to load" : "This app didn't load in time";
        document.getElementById("failure-detail").textContent = reason === "fatal"
          ? "The block sent BLOCK_ERROR {fatal: true}" + (message ? ": " + message : "") + " (" + attempts + plural + ")."
          : "The block never sent BLOCK_READY (" + attempts + plural + ").";
        var spent = state.autoRetries;
        document.getElementById("failure-retrying").textContent = retry
          ? "Retrying automatically… (attempt " + retry.attempt + " of " + retry.of + ")"
          : spent > 0 ? "We already retried " + (spent === 1 ? "once" : spent + " times") + " automatically." : "";
        card.hidden = false;
      }
    };
  })();

  // ---- the trace panel -----------------------------------------------------------
  var panel = (function () {
    var list = document.getElementById("trace-list");
    var violationBox = document.getElementById("violations");
    var violationList = document.getElementById("violation-list");
    var hideReposts = document.getElementById("hide-reposts");
    hideReposts.addEventListener("change", function () {
      list.classList.toggle("hide-reposts", hideReposts.checked);
    });
    // Whether the panel follows the newest row: decided when the developer scrolls, so that adding
    // a row never reads the layout (a forced reflow per message slowed every bridge round trip).
    var stuck = true;
    var scrollPending = false;
    list.addEventListener("scroll", function () {
      stuck = list.scrollTop + list.clientHeight >= list.scrollHeight - 24;
    });
    function follow() {
      if (!stuck || scrollPending) return;
      scrollPending = true;
      requestAnimationFrame(function () {
        scrollPending = false;
        if (stuck) list.scrollTop = list.scrollHeight;
      });
    }

    function when(t) {
      var origin = state.firstMountAt === null ? 0 : state.firstMountAt;
      return (t - origin >= 0 ? "+" : "") + Math.round(t - origin) + " ms";
    }

    function summary(event) {
      if (event.kind === "lifecycle") {
        var details = Object.keys(event).filter(function (k) {
          return ["kind", "event", "t", "attempt", "pageId", "src"].indexOf(k) < 0;
        }).map(function (k) {
          return k + "=" + JSON.stringify(event[k]);
        });
        return details.join(" ");
      }
      if (event.kind === "unanswered") return "requestId " + JSON.stringify(event.requestId) + " got no reply";
      // A silent block gets dozens of these; the first post shows the payload, the file has every one.
      if (event.why === "repost") return "re-post: no BLOCK_READY yet (every " + Math.round(T.init_repost_ms) + " ms)";
      var data = event.data;
      if (event.type && data && typeof data === "object" && "payload" in data) data = data.payload;
      var prefix = !event.dropped ? ""
        : event.dropped === "not-handled" ? "no handler on this surface, dropped: "
        : "dropped (" + event.dropped + "): ";
      return prefix + JSON.stringify(data, shortenRaw);
    }

    // A token's raw JWT is long and says nothing at a glance.
    function shortenRaw(key, value) {
      return key === "raw" && typeof value === "string" && value.length > 24
        ? value.slice(0, 12) + "…(" + value.length + " chars)"
        : value;
    }

    // A silent block is re-sent BLOCK_INIT every 400 ms: one row per run of re-posts, with a
    // count, keeps the rest of the trace on screen (the trace file has every one).
    function addRepost(event) {
      var last = list.lastElementChild;
      if (!last || !last.classList.contains("repost")) return false;
      var count = Number(last.dataset.count || "1") + 1;
      last.dataset.count = String(count);
      last.querySelector(".summary").textContent = "re-posted ×" + count + " until " + when(event.t) +
        ": no BLOCK_READY yet (every " + Math.round(T.init_repost_ms) + " ms)";
      return true;
    }

    function add(event) {
      if (event.why === "repost" && addRepost(event)) return;
      var arrow = { out: "host → block", "in": "block → host" }[event.dir] || "host";
      var label = event.kind === "lifecycle" ? event.event : event.type || "(" + (event.jsType || "?") + ")";
      var text = summary(event) || "";
      if (text.length > 220) text = text.slice(0, 217) + "…";
      var row = el("li", { class: "row row-" + (event.dir || event.kind) }, [
        el("span", { class: "time", text: when(event.t) }),
        el("span", { class: "dir", text: arrow }),
        el("span", { class: "type", text: label }),
        el("span", { class: "summary", text: text })
      ]);
      if (event.why === "repost") row.classList.add("repost");
      if (event.kind === "unanswered" || (event.dropped && event.dropped !== "not-handled")) row.classList.add("row-bad");
      place(row, event.t);
    }

    // Rows stay in the order things happened: a block request reaches the page after it ended, so
    // it goes in before the rows of what followed its start.
    function place(row, t) {
      row.dataset.t = String(t);
      var next = null;
      var before = list.lastElementChild;
      while (before && Number(before.dataset.t) > t) {
        next = before;
        before = before.previousElementSibling;
      }
      list.insertBefore(row, next);
      while (list.childElementCount > MAX_PANEL_ROWS) list.removeChild(list.firstChild);
      follow();
    }

    // One of the block's own requests to the local platform (the frame's fetch with its token):
    // its start on this page's clock, method and path, status and duration; a failure is marked.
    function addRequest(request) {
      var t = Date.parse(request.at) - (request.durationMs || 0) - performance.timeOrigin;
      var failed = request.ok === false;
      var said = "HTTP " + request.status + (failed ? " failed" : "") +
        (request.durationMs != null ? " in " + Math.round(request.durationMs) + " ms" : "");
      if (failed && request.message) said += ": " + request.message;
      else if (failed && request.error && request.error !== "HTTP " + request.status) said += ": " + request.error;
      if (said.length > 220) said = said.slice(0, 217) + "…";
      var row = el("li", { class: "row row-request" + (failed ? " row-bad" : ""), "data-status": String(request.status) }, [
        el("span", { class: "time", text: when(t) }),
        el("span", { class: "dir", text: "block → platform" }),
        el("span", { class: "type", text: request.type + (request.query ? "?" + request.query : "") }),
        el("span", { class: "summary", text: said })
      ]);
      place(row, round(t));
    }

    function addViolation(violation) {
      violationBox.hidden = false;
      violationList.appendChild(el("li", {}, [
        el("span", { class: "kind", text: violation.kind }),
        el("span", { class: "type", text: violation.message_type || "" }),
        el("span", { class: "explanation", text: violation.explanation })
      ]));
      document.getElementById("violation-count").textContent = String(state.violations.length);
      var t = now();
      var row = el("li", { class: "row row-bad" }, [
        el("span", { class: "time", text: when(t) }),
        el("span", { class: "dir", text: "contract" }),
        el("span", { class: "type", text: violation.kind }),
        el("span", { class: "summary", text: (violation.message_type ? violation.message_type + ": " : "") + violation.explanation })
      ]);
      place(row, t);
    }

    function facts() {
      var box = document.getElementById("facts");
      var blockOrigin = new URL(config.blockUrl).origin;
      var rows = [
        ["surface", config.surface.label + (isSlot ? "" : " (" + config.surface.slotId + ")")],
        ["host origin", location.origin],
        ["block origin", blockOrigin],
        ["sandbox", JSON.stringify(config.iframe.sandbox) + (config.iframe.sandbox === config.iframe.declaredSandbox
          ? "" : " (the manifest says " + JSON.stringify(config.iframe.declaredSandbox) + ")")],
        ["height", config.iframe.minHeight + "–" + (config.iframe.maxHeight === null ? "∞" : config.iframe.maxHeight) +
          " px, resizable: " + config.iframe.resizable],
        ["scopes", config.initPayload.token.scopes.join(", ") || "none"],
        ["consent", config.viewerId == null ? "signed out: no consent ledger" :
          "granted: " + (((config.consent || {}).granted || []).join(", ") || "nothing") +
          "; withheld: " + (((config.consent || {}).missingScopes || []).join(", ") || "nothing")],
        ["trace file", config.traceFile || "(none)"]
      ];
      rows.forEach(function (row) {
        box.appendChild(el("div", { class: "fact" }, [
          el("span", { class: "muted", text: row[0] }),
          el("code", { text: row[1] })
        ]));
      });
      (config.notes || []).forEach(function (note) {
        box.appendChild(el("div", { class: "fact note", text: "note: " + note }));
      });
    }

    return { add: add, addViolation: addViolation, addRequest: addRequest, facts: facts };
  })();

  // The block's own requests: the frame calls the local platform directly, so the host server tells
  // the page of each as it is recorded (a long poll, outside the trace queue; it answers at once when
  // the run stops).
  function watchRequests(after) {
    var failures = 0;
    function poll() {
      fetch("/api/requests", { method: "POST", headers: apiHeaders(), body: JSON.stringify({ after: after }) })
        .then(function (response) { return response.json(); })
        .then(function (answer) {
          if (answer.error) {
            console.warn("blockkit dev: the trace panel cannot show the block's requests:", answer.error);
            return;
          }
          failures = 0;
          (answer.requests || []).forEach(function (request) {
            after = Math.max(after, request.seq);
            state.requests.push(request);
            panel.addRequest(request);
          });
          if (!answer.closed) poll();
        }, function (error) {
          failures += 1;
          if (failures < 5) setTimeout(poll, 500 * failures);
          else console.warn("blockkit dev: the trace panel stopped showing the block's requests:", error);
        });
    }
    poll();
  }

  function showViolations(result) {
    ((result && result.violations) || []).forEach(function (violation) {
      state.violations.push(violation);
      panel.addViolation(violation);
    });
  }

  function setStatus(kind, text) {
    var status = document.getElementById("status");
    status.setAttribute("data-state", kind);
    status.textContent = text;
  }

  function round(ms) {
    return Math.round(ms * 10) / 10;
  }

  function seconds(ms) {
    return ms >= 1000 ? ms / 1000 + " s" : Math.round(ms) + " ms";
  }

  // ---- SAVE_IMAGE: the host page downloads the image in its own frame, as the platform's host does ----
  // The emulator's media and blob URLs come from the host server (read from the local store); an
  // image.civitai.com URL is fetched by this page. The block is told {ok: true} or the failure, never where
  // the browser put the file.
  function saveImage(dialog, answer) {
    var bytes = dialog.local
      ? fetch("/api/download", {
          method: "POST",
          headers: apiHeaders(),
          body: JSON.stringify({ dialogId: dialog.dialogId })
        })
      : fetch(dialog.url);
    bytes.then(function (response) {
      if (!response.ok) throw new Error("download failed (" + response.status + ")");
      return response.blob();
    }).then(function (blob) {
      var href = URL.createObjectURL(blob);
      var link = el("a", { href: href, download: dialog.filename, hidden: "" });
      document.body.appendChild(link);
      link.click();
      document.body.removeChild(link);
      setTimeout(function () { URL.revokeObjectURL(href); }, 1000);
      record({ kind: "lifecycle", event: "image-saved", filename: dialog.filename, bytes: blob.size });
      answer({ ok: true });
    }).catch(function (error) {
      answer({ error: error && /^download failed/.test(error.message) ? error.message : "download failed" });
    });
  }

  // ---- dialogs: what the platform asks the viewer (buy Buzz, buy a good, pick, upload, publish) ----
  var dialogs = (function () {
    var box = document.getElementById("host-dialog");
    function close() { box.hidden = true; box.replaceChildren(); }
    function button(text, cls, onClick) {
      var b = el("button", { type: "button", class: cls }, [text]);
      b.addEventListener("click", onClick);
      return b;
    }
    return {
      open: function (dialog, answer) {
        var done = false;
        function finish(choice) {
          if (done) return;
          done = true;
          close();
          answer(choice);
        }
        var body = [el("h2", {}, [dialog.title || dialog.type])];
        var confirm = null;
        if (dialog.type === "OPEN_BUZZ_PURCHASE") {
          var b = dialog.balance || {};
          body.push(el("p", { class: "muted" }, ["Balance: " + (b.blue || 0) + " blue · " + (b.green || 0) +
            " green · " + (b.yellow || 0) + " yellow (emulated checkout: no money moves)"]));
          var select = el("select", { id: "dialog-amount" }, dialog.packs.map(function (n) {
            return el("option", { value: String(n) }, [n + " Buzz"]);
          }));
          body.push(select);
          confirm = function () { return { amount: Number(select.value) }; };
        } else if (dialog.type === "PURCHASE_GOOD") {
          var good = dialog.good;
          body.push(el("p", { class: "dialog-good" }, [good.title]));
          if (good.description) body.push(el("p", { class: "muted" }, [good.description]));
          body.push(el("p", { class: "dialog-price" }, [good.priceBuzz + " Buzz"]));
          body.push(el("p", { class: "muted" }, ["The block asks to charge the viewer. Confirm to buy."]));
          // Buy names what this dialog showed: the host charges that, or nothing.
          confirm = function () { return { goodId: good.id, priceBuzz: good.priceBuzz }; };
        } else if (dialog.type === "PUBLISH_GENERATION_OUTPUTS") {
          body.push(el("p", { class: "dialog-message" }, [dialog.message]));
          confirm = function () { return {}; };
        } else if (dialog.type === "OPEN_IMAGE_UPLOAD") {
          var input = el("input", { type: "file", accept: "image/*", id: "dialog-file" });
          body.push(el("p", { class: "muted" }, [dialog.purpose === "generationSource"
            ? "A private generation source: not scanned."
            : "This image is public, so it is scanned (the local platform rates every upload PG)" +
              (dialog.asyncScan ? "; the block hears the verdict after the upload." : ".")]));
          body.push(input);
          confirm = function () { return null; };
          input.addEventListener("change", function () {
            var file = input.files && input.files[0];
            if (!file) return;
            var reader = new FileReader();
            reader.onload = function () {
              var dataUrl = String(reader.result);
              // The host API takes at most 1 MiB a request: say so rather than fail the upload unseen.
              if (dataUrl.length > UPLOAD_MAX_CHARS) {
                input.value = "";
                input.insertAdjacentElement("afterend", el("p", { class: "dialog-error" },
                  ["blockkit dev takes files up to about 700 KB; pick a smaller one."]));
                return;
              }
              finish({ dataUrl: dataUrl, name: file.name });
            };
            reader.readAsDataURL(file);
          });
        } else {
          var list = el("select", { id: "dialog-pick", size: "8" }, dialog.items.map(function (item) {
            return el("option", { value: String(item.versionId) },
              [item.modelName + " · " + item.versionName + " (" + item.modelType + ", " + item.baseModel + ")"]);
          }));
          if (list.options.length) list.options[0].selected = true;
          else body.push(el("p", { class: "muted dialog-empty" }, ["Nothing in the local catalogue matches."]));
          body.push(list);
          confirm = list.options.length ? function () { return { versionId: Number(list.value) }; } : null;
        }
        var actions = [button("Cancel", "dialog-cancel", function () { finish(null); })];
        if (dialog.type !== "OPEN_IMAGE_UPLOAD" && confirm) {
          var label = { PURCHASE_GOOD: "Buy", PUBLISH_GENERATION_OUTPUTS: "Publish" }[dialog.type] || "Confirm";
          actions.push(button(label, "dialog-confirm", function () { finish(confirm()); }));
        }
        body.push(el("div", { class: "dialog-actions" }, actions));
        box.replaceChildren(el("div", { class: "dialog-card", role: "dialog", "data-type": dialog.type }, body));
        box.hidden = false;
      }
    };
  })();

  // ---- the viewer switcher: who looks at the block ------------------------------------
  // Signing in or out reloads the platform's page, so a new viewer gets a fresh page load:
  // a new block instance, a new token and a new BLOCK_INIT.
  (function () {
    var select = document.getElementById("viewer-switch");
    if (!select || !config.users) return;
    var options = [el("option", { value: "" }, ["signed out"])].concat(config.users.map(function (user) {
      return el("option", { value: String(user.id) }, [user.label]);
    }));
    select.replaceChildren.apply(select, options);
    select.value = config.viewerId == null ? "" : String(config.viewerId);
    select.hidden = false;
    select.addEventListener("change", function () {
      var userId = select.value === "" ? null : Number(select.value);
      post("/api/viewer", { userId: userId }).then(function () { window.location.reload(); }, reportFailure);
    });
  })();

  // ---- start -----------------------------------------------------------------------
  // Tests and `blockkit dev --check` read the host's state here.
  window.__blockkit = {
    config: config,
    get outcome() { return state.outcome; },
    get attempt() { return state.attempt; },
    get handshakeMs() { return state.handshakeMs; },
    get height() { return state.height; },
    get violations() { return state.violations.slice(); },
    // The block's own requests to the local platform shown in the trace panel (trace call events).
    get requests() { return state.requests.slice(); },
    // Requests still inside their reply timeout: each ends answered or reported.
    get pendingRequests() { return Object.keys(state.pending).length; },
    // When the host mints again and pushes TOKEN_REFRESH (ms after the last mint), and the viewer's consent.
    get tokenRefreshInMs() { return tokenRefresh.inMs; },
    get consent() { return { granted: consent.granted.slice(), missingScopes: consent.missing.slice() }; },
    flush: function flush() {
      sendOutbox();
      var current = queue;
      return current.then(function () {
        // A reply the last answer made (a dialog's) sits in the outbox now: report it too.
        sendOutbox();
        return current === queue ? true : flush();
      });
    }
  };

  document.title = "blockkit dev · " + config.name;
  setTheme(state.theme);
  document.getElementById("theme-toggle").addEventListener("click", toggleTheme);
  document.getElementById("token-refresh").addEventListener("click", function () { pushToken("control"); });
  document.getElementById("reload").addEventListener("click", restart);
  document.getElementById("failure-retry").addEventListener("click", manualRetry);
  scheduleTokenRefresh(config.tokenRefreshInMs);
  (function () {
    // The Scenarios menu: each switch drives the local platform from now on; the switches that change
    // the token or the viewer's Buzz reload the page, so the block starts as under the new condition.
    var list = document.getElementById("scenario-list");
    if (!list) return;
    var on = {};
    (config.scenarios || []).forEach(function (name) { on[name] = true; });
    var reloads = { "insufficient-buzz": true, "consent-denied": true, "token-expires-early": true };
    (config.switchableScenarios || []).forEach(function (scenario) {
      var box = el("input", { type: "checkbox", "data-scenario": scenario.name });
      box.checked = !!on[scenario.name];
      box.addEventListener("change", function () {
        post("/api/scenario", { name: scenario.name, on: box.checked }).then(function (answer) {
          if (answer && answer.error) { box.checked = !box.checked; reportFailure(new Error(answer.error)); return; }
          record({ kind: "lifecycle", event: "scenario-switched", scenario: scenario.name, on: box.checked });
          if (reloads[scenario.name]) window.location.reload();
          else if (scenario.name === "slow") config.latencyMs = answer.latencyMs;
        }, reportFailure);
      });
      list.appendChild(el("label", { title: scenario.effect }, [box, " " + scenario.name]));
    });
  })();
  (function () {
    // The viewer menu's "Reset consent": forget this viewer's grant, then load the page again (a first visit).
    var reset = document.getElementById("consent-reset");
    if (!reset) return;
    reset.hidden = config.viewerId == null;
    reset.addEventListener("click", function () {
      post("/api/consent/reset", {}).then(function () { window.location.reload(); }, reportFailure);
    });
  })();
  (function () {
    // The top bar's "Console": the local platform's web console, opened signed in. Its sign-in link holds
    // the run's access key, so the page never holds it: a click asks the host's own API for it (with the
    // dev key) and opens it in a new tab; the console takes the key into a cookie and drops it from the URL.
    var link = document.getElementById("console-link");
    if (!link || !config.consoleUrl) return;
    link.href = config.consoleUrl;
    link.hidden = false;
    link.addEventListener("click", function (event) {
      if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      fetch("/api/console", { method: "POST", headers: apiHeaders(), body: "{}" })
        .then(function (response) {
          return response.json().then(function (answer) {
            if (!response.ok || !answer || typeof answer.url !== "string") {
              throw new Error(answer && answer.error ? answer.error : "the dev host answered " + response.status);
            }
            return answer.url;
          });
        })
        .then(function (url) { window.open(url, "_blank", "noopener,noreferrer"); }, function (error) {
          reportFailure(error);
          window.open(config.consoleUrl, "_blank", "noopener,noreferrer"); // the console then asks for the key
        });
    });
  })();
  panel.facts();
  watchRequests(config.requestsAfter || 0);
  mount();
  }
})();
