-- The Lua kernels the real-build workload (workload.lua) and the paired program's steps
-- (c-fixtures/bench/nas_paired/lua_steps.lua) share: recursion, a table from a seeded
-- generator, and string formatting and matching. `dofile` returns them.
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

return { fib = fib, shuffled = shuffled, words = words }
