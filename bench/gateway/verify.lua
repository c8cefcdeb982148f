-- wrk script for POST /api/v1/payments/apple/transactions/verify.
-- Cycles over pre-signed fresh transactions (one JSON body per line in
-- $GATEWAY_BENCH_BODIES) and bearer tokens (one per line in
-- $GATEWAY_BENCH_TOKENS), body i with token i mod #tokens. Each wrk thread
-- takes the bodies i = offset, offset + threads, ... so no body is sent twice
-- unless the run outlasts the file (reported as "reused"). Counts answers by
-- outcome: granted (fresh credit), already_granted (a replay), other.
local bodies, tokens = {}, {}
local function read_lines(path, into)
  local file = assert(io.open(path, "r"), "cannot open " .. tostring(path))
  for line in file:lines() do if #line > 0 then into[#into + 1] = line end end
  file:close()
end

local threads = {}
local thread_count = 0
function setup(thread)
  thread:set("offset", thread_count)
  thread_count = thread_count + 1
  table.insert(threads, thread)
end

function init(args)
  read_lines(os.getenv("GATEWAY_BENCH_BODIES"), bodies)
  read_lines(os.getenv("GATEWAY_BENCH_TOKENS"), tokens)
  assert(#bodies > 0 and #tokens > 0, "no bodies or no tokens")
  stride = tonumber(os.getenv("GATEWAY_BENCH_THREADS") or "1")
  index = offset
  sent, reused, granted, replayed, other, first_other = 0, 0, 0, 0, 0, ""
end

function request()
  local i = index % #bodies
  if index >= #bodies then reused = reused + 1 end
  index = index + stride
  sent = sent + 1
  return wrk.format("POST", "/api/v1/payments/apple/transactions/verify", {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1],
  }, bodies[i + 1])
end

function response(status, headers, body)
  if status == 200 and body:find('"status":"granted"', 1, true) then
    granted = granted + 1
  elseif status == 200 and body:find('"status":"already_granted"', 1, true) then
    replayed = replayed + 1
  else
    other = other + 1
    if first_other == "" then first_other = status .. " " .. body:sub(1, 200) end
  end
end

function done(summary, latency, requests)
  local totals = { sent = 0, reused = 0, granted = 0, replayed = 0, other = 0 }
  local first = ""
  for _, thread in ipairs(threads) do
    for key, _ in pairs(totals) do totals[key] = totals[key] + (thread:get(key) or 0) end
    local thread_first = thread:get("first_other")
    if first == "" and thread_first and thread_first ~= "" then first = thread_first end
  end
  io.write(string.format("verify_outcomes granted=%d already_granted=%d other=%d reused_bodies=%d\n",
    totals.granted, totals.replayed, totals.other, totals.reused))
  if first ~= "" then io.write("verify_first_other " .. first:gsub("\n", " ") .. "\n") end
end
