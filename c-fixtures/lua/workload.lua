-- A Lua workload for the real-build test and the build benchmark (run-time overhead):
-- recursion, tables, sorting, strings, closures and errors caught by pcall (Lua raises them
-- with longjmp through instrumented C frames). `lua workload.lua SCALE`; output depends only on
-- SCALE, and the test checks the interpreter routines it exercises a known number of times.
local scale = tonumber(arg[1]) or 1

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

local failures = 0
for i = 1, 100 * scale do
  local ok, message = pcall(function() error("failure " .. i) end)
  if not ok and message:find("failure") then failures = failures + 1 end
end

local t = shuffled(20000 * scale)
table.sort(t)
print(string.format("fib %d", fib(20 + math.floor(math.log(scale, 2)))))
print(string.format("sorted %d first %d last %d", #t, t[1], t[#t]))
print(string.format("distinct %d failures %d %s", words(10000 * scale), failures, string.rep("ok", 2)))
