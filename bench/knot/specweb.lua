-- SPDX-License-Identifier: MIT
-- wrk script: GET requests with the SPECweb99 static mix over the file set
-- of gen_fileset.py. Pass the number of directories after "--":
--   wrk -t2 -c100 -d10s -s specweb.lua http://127.0.0.1:PORT -- 20
-- Class by frequency (35 / 50 / 14 / 1 %), file within a class by the fixed
-- SPECweb99 popularity, directory by Zipf (weight 1/rank). At the end one
-- line "RESULT {json}" gives the numbers run.py records.
--
-- Each wrk thread draws its requests ahead, in init, and cycles through
-- them: drawing and formatting one per request in Lua cost wrk ~3 us of a
-- ~18 us request (wrk takes over half of the two CPUs the server under
-- test shares, so its cost dilutes the servers' differences).

local class_p = { 0.35, 0.50, 0.14, 0.01 }
local file_p = { 0.039, 0.059, 0.088, 0.177, 0.353, 0.118, 0.074, 0.050, 0.042 }

local function cumulative(weights)
  local c, sum = {}, 0
  for i, w in ipairs(weights) do sum = sum + w; c[i] = sum end
  for i = 1, #c do c[i] = c[i] / sum end
  return c
end

-- The first index whose cumulative weight reaches x (binary search).
local function pick(cum, x)
  local lo, hi = 1, #cum
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cum[mid] < x then lo = mid + 1 else hi = mid end
  end
  return lo
end

local class_c, file_c, dir_c
local counter = 0
local ring, ring_size, at = {}, 16384, 0

function setup(thread)
  counter = counter + 1
  thread:set("thread_id", counter)
end

function init(args)
  local dirs = tonumber(args[1]) or 20
  local zipf = {}
  for i = 1, dirs do zipf[i] = 1 / i end
  dir_c, class_c, file_c = cumulative(zipf), cumulative(class_p), cumulative(file_p)
  math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919)
  for i = 1, ring_size do
    local d = pick(dir_c, math.random()) - 1
    local c = pick(class_c, math.random()) - 1
    local f = pick(file_c, math.random())
    ring[i] = wrk.format("GET", string.format("/dir%05d/class%d_%d", d, c, f))
  end
end

function request()
  at = at % ring_size + 1
  return ring[at]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests": %d, "duration_us": %d, "bytes": %d, "p50_us": %d, "p99_us": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}}\n',
    summary.requests, summary.duration, summary.bytes,
    math.floor(latency:percentile(50)), math.floor(latency:percentile(99)),
    e.connect, e.read, e.write, e.status, e.timeout))
end
