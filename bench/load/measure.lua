-- wrk script of bench/load/run.sh. With LOAD_ROUTE_LUA set it runs that
-- route's script unchanged: bench/gateway/verify.lua (distinct fresh
-- purchases, answers counted) or bench/gateway/balance.lua (reads over all
-- the bench's users); with LOAD_DELAY_MS set each connection waits that long between
-- requests (the soak's steady rate). Either way it adds one line of latency
-- percentiles wrk's --latency does not print (p99.9), in microseconds.
local verify_script = os.getenv("LOAD_ROUTE_LUA")
if verify_script and #verify_script > 0 then dofile(verify_script) end

local delay_ms = tonumber(os.getenv("LOAD_DELAY_MS") or "")
if delay_ms then
  function delay() return delay_ms end
end

local inner_done = done
function done(summary, latency, requests)
  if inner_done then inner_done(summary, latency, requests) end
  io.write(string.format("latency_us p50=%d p99=%d p999=%d max=%d\n",
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max))
end
