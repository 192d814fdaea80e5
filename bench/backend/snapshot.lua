-- wrk script: POST a snapshot whose snapshot_id is new for every request (no duplicates), so each
-- request is a full validate-store-enqueue. The body template is read once per thread.
local counter = 0
local thread_no = 0
local threads = {}
local parts

function setup(thread)
  thread_no = thread_no + 1
  thread:set("tid", thread_no)
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(os.getenv("BENCH_SNAPSHOT_TEMPLATE"), "r"))
  local body = f:read("*a")
  f:close()
  -- split around the two placeholders: the snapshot id and the server address
  local zero = "00000000-0000-0000-0000-000000000000"
  local addr = "BENCH-ADDRESS"
  local s1, e1 = body:find(zero, 1, true)
  local s2, e2 = body:find(addr, 1, true)
  assert(s1 and s2 and s1 < s2, "template needs the id before the address")
  parts = {body:sub(1, s1 - 1), body:sub(e1 + 1, s2 - 1), body:sub(e2 + 1)}
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_AGENT_KEY")
end

function request()
  counter = counter + 1
  local id = string.format("%08x-%04x-4000-8000-%012x", math.random(0, 0x7fffffff), tid, counter)
  -- a fleet of 1000 servers per thread, as many agents uploading at once would be
  local address = string.format("10.%d.%d.%d:11211", tid, math.floor((counter % 1000) / 250), counter % 250)
  return wrk.format(nil, nil, nil, parts[1] .. id .. parts[2] .. address .. parts[3])
end

function response(status, headers, body)
  if status ~= 202 then
    io.stderr:write("unexpected status " .. status .. ": " .. body:sub(1, 200) .. "\n")
  end
end
