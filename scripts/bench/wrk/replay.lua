-- Copied from the team's load harness, unchanged except
-- the paths in these comments (scripts/bench/...).
-- Peer-neutral wrk script: replays a pre-rendered pool of raw HTTP/1.1
-- requests (method, path, auth header, body all baked in by
-- `harness.py plan` / `harness.py wrk` from scripts/bench/targets/<name>.json).
--
-- Usage: wrk -t2 -c64 -d10s -s scripts/bench/wrk/replay.lua http://127.0.0.1:PORT/ -- PLANFILE
-- Plan file format: repeated "<byte length>\n<raw request bytes>".
--
-- Each wrk thread starts at a different offset and cycles through the pool,
-- so connections spread over all users/records in the fixtures.
-- No response() callback on purpose: defining one slows wrk down a lot.
-- done() prints one machine-readable line: WRKJSON {...}

local threads_started = 0

function setup(thread)
   thread:set("tid", threads_started)
   threads_started = threads_started + 1
end

local reqs = {}
local n = 0
local i = 0

function init(args)
   local path = args[1] or os.getenv("WRK_PLAN")
   assert(path, "plan file path required after --")
   local f = assert(io.open(path, "rb"))
   local data = f:read("*a")
   f:close()
   local pos = 1
   local len_data = #data
   while pos <= len_data do
      local nl = string.find(data, "\n", pos, true)
      if not nl then break end
      local len = tonumber(string.sub(data, pos, nl - 1))
      reqs[#reqs + 1] = string.sub(data, nl + 1, nl + len)
      pos = nl + 1 + len
   end
   n = #reqs
   assert(n > 0, "empty plan file")
   i = ((tid or 0) * 7919) % n
end

function request()
   i = i % n + 1
   return reqs[i]
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,' ..
      '"lat_mean_us":%.1f,"lat_p50_us":%d,"lat_p90_us":%d,"lat_p99_us":%d,"lat_max_us":%d}\n',
      summary.requests, summary.duration, summary.bytes,
      e.connect, e.read, e.write, e.status, e.timeout,
      latency.mean, latency:percentile(50), latency:percentile(90),
      latency:percentile(99), latency.max))
end
