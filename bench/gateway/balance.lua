-- wrk script for GET /api/v1/points/balance over many users: request i
-- carries bearer token i mod #tokens (one per line in
-- $GATEWAY_BENCH_TOKENS), so concurrent reads are of different users, as in
-- production (one token would let the gateway's coalesced reads fold every
-- request of a call into one user). Requests are formatted once, in init.
local requests = {}

function init(args)
  local file = assert(io.open(os.getenv("GATEWAY_BENCH_TOKENS"), "r"), "cannot open GATEWAY_BENCH_TOKENS")
  for line in file:lines() do
    if #line > 0 then
      requests[#requests + 1] = wrk.format("GET", "/api/v1/points/balance", { ["Authorization"] = "Bearer " .. line })
    end
  end
  file:close()
  assert(#requests > 0, "no tokens")
  index = 0
end

function request()
  index = index + 1
  return requests[(index % #requests) + 1]
end
