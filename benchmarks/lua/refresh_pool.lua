-- wrk script: each request spends one refresh token from a pool file (one "client_id secret token"
-- per line); threads take every Nth line, so no token is presented twice. A refresh rotates, so a
-- token can only be used once; when a thread runs out it stops.
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  pool = {}
  local n, i = tonumber(args[2]), 0
  for line in io.lines(args[1]) do
    if i % n == id then table.insert(pool, line) end
    i = i + 1
  end
  next_index = 1
  bad = 0
end

function request()
  local line = pool[next_index]
  if line == nil then
    wrk.thread:stop()
    return wrk.format("GET", "/")
  end
  next_index = next_index + 1
  local client, secret, token = line:match("(%S+) (%S+) (%S+)")
  local body = "grant_type=refresh_token&refresh_token=" .. token .. "&client_id=" .. client .. "&client_secret=" .. secret
  return wrk.format("POST", "/api/auth/oauth/token", {["Content-Type"] = "application/x-www-form-urlencoded"}, body)
end

function response(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + (t:get("bad") or 0) end
  io.write(string.format("non-200: %d\n", total))
end
