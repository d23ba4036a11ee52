"""The editor setups the guide gives, in the real editors: Neovim's built-in client and Emacs's eglot.

Each editor opens a manifest with no "$schema" (BK312, which `blockkit fix` fixes), waits for the
server's diagnostics, makes an edit and saves at once. The file on disk must hold the edit and the
fix: the fix-all on save asked and waited before the write (an asynchronous one lands after it, or
on the text before the edit). A second save, with nothing left to fix, must write the buffer as it is.
The setups are the files in editors/, and the guide shows them verbatim.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_helpers import cli_env  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[2]
NEOVIM_SETUP = ROOT / "editors" / "neovim" / "blockkit.lua"
EMACS_SETUP = ROOT / "editors" / "emacs" / "blockkit.el"
GUIDE = ROOT / "docs" / "editor.md"
SCHEMA = "https://civitai.com/schemas/app-block/v1.json"
EDIT = '  "homepage": "https://example.com",'

NEOVIM_DRIVER = r"""
local out = { first = {}, second = {} }
out.diagnosed = vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(0)) do table.insert(out.first, tostring(d.code or d.message)) end
vim.api.nvim_buf_set_lines(0, 1, 1, false, { vim.env.EDIT })
vim.cmd("write")
out.after_first_save = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
vim.cmd("write")
out.after_second_save = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
local clients = {}
for _, c in pairs(vim.lsp.buf_get_clients(0)) do table.insert(clients, c.name) end
out.clients = clients
local f = io.open(vim.env.RESULT, "w"); f:write(vim.fn.json_encode(out)); f:close()
vim.cmd("qa!")
"""

EMACS_DRIVER = r"""
(find-file (getenv "MANIFEST"))
(run-hooks 'post-command-hook)  ; as after the command that opened it: eglot-ensure connects now
(let ((deadline (+ (float-time) 30)))
  (while (and (< (float-time) deadline) (not (and (eglot-managed-p) (flymake-diagnostics))))
    (accept-process-output nil 0.05)))
(let ((mode (symbol-name major-mode))
      (managed (if (eglot-managed-p) t :json-false))
      (first (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
  (goto-char (point-min)) (forward-line 1)
  (insert (getenv "EDIT") "\n")
  (save-buffer)
  (set-buffer-modified-p t)
  (save-buffer)
  (let ((text (buffer-string)))
    (with-temp-file (getenv "RESULT")
      (insert (json-encode (list (cons 'mode mode) (cons 'managed managed)
                                 (cons 'first (vconcat first)) (cons 'text text)))))))
(kill-emacs 0)
"""


def _manifest(path: Path) -> str:
    data = json.loads((ROOT / "examples" / "hello-block" / "block.manifest.json").read_text())
    data.pop("$schema", None)
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    return text


def _blockkit_on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has a `blockkit` that runs this checkout's, as the editors look it up."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "blockkit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m blockkit "$@"\n')
    shim.chmod(0o755)
    env = cli_env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(tmp_path / "home")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "home" / ".config")
    env["XDG_DATA_HOME"] = str(tmp_path / "home" / ".local" / "share")
    env["XDG_STATE_HOME"] = str(tmp_path / "home" / ".local" / "state")
    env["EDIT"] = EDIT
    return env


def _fenced(language: str, after_heading: str) -> str:
    guide = GUIDE.read_text()
    section = guide[guide.index(after_heading):]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block after {after_heading!r} in docs/editor.md"
    return match.group(1)


def _expected_after_save(original: str) -> list[str]:
    lines = original.splitlines()
    return [lines[0], f'  "$schema": "{SCHEMA}",', EDIT, *lines[1:]]


def test_the_guide_shows_the_editor_setups_verbatim() -> None:
    assert _fenced("lua", "## Neovim") == NEOVIM_SETUP.read_text()
    assert _fenced("elisp", "## Emacs") == EMACS_SETUP.read_text()


def test_neovim_diagnoses_and_fixes_all_before_the_write(tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not installed (apt-get install neovim)")
    work = tmp_path / "block"
    work.mkdir()
    manifest = work / "block.manifest.json"
    original = _manifest(manifest)
    (tmp_path / "drive.lua").write_text(NEOVIM_DRIVER)
    env = _blockkit_on_path(tmp_path)
    env["RESULT"] = str(tmp_path / "result.json")
    subprocess.run([nvim, "--headless", "-i", "NONE", "-u", str(NEOVIM_SETUP),
                    "-c", f"luafile {tmp_path / 'drive.lua'}", str(manifest)],
                   cwd=work, env=env, timeout=120, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["clients"] == ["blockkit"]
    assert result["diagnosed"] is True and "BK312" in result["first"], result
    expected = _expected_after_save(original)
    assert manifest.read_text().splitlines() == expected
    assert result["after_first_save"].splitlines() == expected
    # Nothing left to fix: the second save writes the buffer unchanged.
    assert result["after_second_save"] == result["after_first_save"]


def test_emacs_eglot_diagnoses_and_fixes_all_before_the_write(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs is not installed (apt-get install emacs-nox elpa-eglot)")
    probe = subprocess.run([emacs, "--batch", "--eval", "(require 'eglot)"], capture_output=True,
                           timeout=60, stdin=subprocess.DEVNULL)
    if probe.returncode != 0:
        pytest.skip("eglot is not installed for this Emacs (apt-get install elpa-eglot)")
    work = tmp_path / "block"
    work.mkdir()
    manifest = work / "block.manifest.json"
    original = _manifest(manifest)
    (tmp_path / "drive.el").write_text(EMACS_DRIVER)
    env = _blockkit_on_path(tmp_path)
    env["RESULT"] = str(tmp_path / "result.json")
    env["MANIFEST"] = str(manifest)
    # --batch reads no init file but the site's (Debian's puts elpa-eglot on the load path).
    subprocess.run([emacs, "--batch", "-l", str(EMACS_SETUP), "-l", str(tmp_path / "drive.el")],
                   cwd=work, env=env, timeout=120, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["mode"] == "blockkit-manifest-mode" and result["managed"] is True, result
    assert any("BK312" in text for text in result["first"]), result
    expected = _expected_after_save(original)
    assert manifest.read_text().splitlines() == expected
    assert result["text"].splitlines() == expected
