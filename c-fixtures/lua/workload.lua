-- A Lua workload for the real-build test and the build benchmark (run-time overhead):
-- recursion, tables, sorting, strings, closures and errors caught by pcall (Lua raises them
-- with longjmp through instrumented C frames). `lua workload.lua SCALE`; output depends only on
-- SCALE, and the test checks the interpreter routines it exercises a known number of times.
local scale = tonumber(arg[1]) or 1

-- The kernels, from the file beside this one.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kernels = dofile(here .. "kernels.lua")
local fib, shuffled, words = kernels.fib, kernels.shuffled, kernels.words

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
