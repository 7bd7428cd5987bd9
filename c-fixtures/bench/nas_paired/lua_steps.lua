-- One time step of the paired Lua program (lua_steps.c): the same mix as the real-build
-- workload (c-fixtures/lua/workload.lua), about 3 ms a step in the plain copy: recursion,
-- tables, sorting with a Lua comparator, string formatting and matching, closures, and errors
-- caught by pcall. Every step does the same work: its tables are rebuilt from the same seed.
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function shuffled(n)
  local t, seed = {}, 42
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    t[i] = seed % 100000
  end
  return t
end

local function words(n)
  local parts = {}
  for i = 1, n do parts[#parts + 1] = string.format("w%d", i % 97) end
  local counts = {}
  for w in table.concat(parts, " "):gmatch("%S+") do counts[w] = (counts[w] or 0) + 1 end
  local distinct = 0
  for _ in pairs(counts) do distinct = distinct + 1 end
  return distinct
end

checksum = 0

function step()
  local failures = 0
  for i = 1, 20 do
    local ok, message = pcall(function() error("failure " .. i) end)
    if not ok and message:find("failure") then failures = failures + 1 end
  end
  local t = shuffled(4000)
  table.sort(t, function(a, b) return a > b end)
  checksum = checksum + fib(18) + t[1] + words(2000) + failures
end
