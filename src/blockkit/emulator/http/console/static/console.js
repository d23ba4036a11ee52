// The blockkit console's one script: it sends each action form as JSON to the console's own origin.
// Written for this project; no third-party code. Forms marked data-action="NAME" go to
// POST /__emulator/console/NAME with the page's CSRF token; data-upload="PATH" sends the chosen file.
"use strict";
(function () {
  var TOKEN_HEADER = "X-Blockkit-Console-Token";
  var NOTE_KEY = "blockkit-console-note";

  function token() {
    var meta = document.querySelector('meta[name="bk-console-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  function show(message, isError, busy) {
    var status = document.getElementById("status");
    if (!status) return;
    status.textContent = message;
    status.className = "status " + (busy ? "busy" : isError ? "error" : "ok");
    if (isError) status.setAttribute("role", "alert"); else status.setAttribute("role", "status");
  }

  function fields(form) {
    var out = {};
    new FormData(form).forEach(function (value, name) {
      if (value instanceof File) return;
      if (Object.prototype.hasOwnProperty.call(out, name)) {
        if (!Array.isArray(out[name])) out[name] = [out[name]];
        out[name].push(value);
      } else {
        out[name] = value;
      }
    });
    form.querySelectorAll("[data-list]").forEach(function (input) {
      // A textarea of one item a line, sent as a list.
      out[input.name] = input.value.split("\n").map(function (s) { return s.trim(); }).filter(Boolean);
    });
    form.querySelectorAll('input[type="checkbox"][data-bool]').forEach(function (input) {
      out[input.name] = input.checked;
    });
    return out;
  }

  function finish(response, form) {
    return response.text().then(function (text) {
      var body = {};
      try { body = JSON.parse(text); } catch (e) { body = { error: text || response.statusText }; }
      if (!response.ok || body.error) {
        show(body.error || ("refused: " + response.status), true);
        form.removeAttribute("aria-busy");
        return;
      }
      if (body.secret) {
        // Shown once (a client secret, an API key): kept on the page, never in storage.
        show(body.message, false);
        var out = document.getElementById("secret");
        if (out) { out.textContent = body.secret; out.hidden = false; }
        form.removeAttribute("aria-busy");
        return;
      }
      try { sessionStorage.setItem(NOTE_KEY, body.message || "done"); } catch (e) { /* private mode */ }
      if (body.redirect) window.location.assign(body.redirect); else window.location.reload();
    });
  }

  function send(form, url, body, type) {
    form.setAttribute("aria-busy", "true");
    show("working…", false, true);
    var headers = {};
    headers["Content-Type"] = type;
    headers[TOKEN_HEADER] = token();
    return fetch(url, { method: "POST", headers: headers, body: body, credentials: "same-origin" })
      .then(function (response) { return finish(response, form); })
      .catch(function (error) { show("the console could not reach the emulator: " + error, true); });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var button = event.submitter || null;
    // A second button of a form may send another action (data-as): Delete beside Save.
    var name = (button && button.getAttribute("data-as")) || form.getAttribute("data-action");
    var upload = form.getAttribute("data-upload");
    if (!name && !upload) return;
    event.preventDefault();
    var question = (button && button.getAttribute("data-confirm")) || form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) return;
    if (name) {
      send(form, "/__emulator/console/" + encodeURIComponent(name), JSON.stringify(fields(form)), "application/json");
      return;
    }
    var input = form.querySelector('input[type="file"]');
    if (!input || !input.files || !input.files.length) { show("choose a file first", true); return; }
    send(form, upload, input.files[0], "application/zip");
  });

  document.addEventListener("DOMContentLoaded", function () {
    var note = null;
    try { note = sessionStorage.getItem(NOTE_KEY); sessionStorage.removeItem(NOTE_KEY); } catch (e) { /* none */ }
    if (note) show(note, false);
    // The requests page, when asked to follow the journal: reload it every few seconds.
    var follow = document.querySelector("[data-follow]");
    if (follow) {
      var every = parseInt(follow.getAttribute("data-follow"), 10) || 2000;
      window.setTimeout(function () { window.location.reload(); }, every);
    }
  });
})();
