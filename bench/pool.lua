-- wrk -s bench/pool.lua: requests read from the file named by BENCH_REQUESTS, one a line:
-- METHOD <tab> PATH <tab> BODY <tab> Header: value <tab> ...  (bench/web.py writes it).
-- Each thread goes round the pool from its own starting point, so the sessions or API keys
-- of the pool are shared out rather than one of them hammered.
local path = assert(os.getenv("BENCH_REQUESTS"), "BENCH_REQUESTS is not set")
local requests = {}
for line in io.lines(path) do
  local fields = {}
  for field in (line .. "\t"):gmatch("([^\t]*)\t") do
    fields[#fields + 1] = field
  end
  local headers = {}
  for i = 4, #fields do
    local name, value = fields[i]:match("^([^:]+):%s*(.*)$")
    headers[name] = value
  end
  local body = fields[3] ~= "" and fields[3] or nil
  requests[#requests + 1] = wrk.format(fields[1], fields[2], headers, body)
end
assert(#requests > 0, "no request in " .. path)

local threads = 0
function setup(thread)
  thread:set("first", threads * 7)
  threads = threads + 1
end

local position
function init(args)
  position = (first or 0) % #requests
end

function request()
  position = position % #requests + 1
  return requests[position]
end
