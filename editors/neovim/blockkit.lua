-- blockkit lsp in Neovim's built-in client, with no plugin (tried on Neovim 0.7.2, Debian 12's).
-- Put it in your init.lua, or save it as ~/.config/nvim/plugin/blockkit.lua.
local manifests = { "block.manifest.json", "*.manifest.json" }
local client_id = nil

vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
  pattern = manifests,
  callback = function(args)
    if not (client_id and vim.lsp.get_client_by_id(client_id)) then
      client_id = vim.lsp.start_client({
        name = "blockkit",
        cmd = { "blockkit", "lsp" },
        root_dir = vim.fn.fnamemodify(args.file, ":p:h"),
        init_options = { tier = "unverified" },  -- and allowedOrigins, grantedScopes, ...
      })
    end
    if client_id then
      vim.lsp.buf_attach_client(args.buf, client_id)
    end
  end,
})

-- Fix all (what `blockkit fix` writes) on save. It asks and applies before the write, and
-- waits for the answer (at most 3 s): an asynchronous code action would land after the write.
vim.api.nvim_create_autocmd("BufWritePre", {
  pattern = manifests,
  callback = function(args)
    local client = client_id and vim.lsp.get_client_by_id(client_id)
    if not client then
      return
    end
    local last = vim.api.nvim_buf_line_count(args.buf)
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(args.buf) },
      range = { start = { line = 0, character = 0 }, ["end"] = { line = last, character = 0 } },
      context = { only = { "source.fixAll.blockkit" }, diagnostics = {} },
    }
    local reply = client.request_sync("textDocument/codeAction", params, 3000, args.buf)
    for _, action in ipairs((reply and reply.result) or {}) do
      if action.edit then
        vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
      end
    end
  end,
})
