-- One time step of the paired Lua program (lua_steps.c): the same mix as the real-build
-- workload (c-fixtures/lua/workload.lua), with its kernels, about 3 ms a step in the plain copy:
-- recursion, tables, sorting with a Lua comparator, string formatting and matching, closures,
-- and errors caught by pcall. Every step does the same work: its tables are rebuilt from the
-- same seed.
-- The kernels the real-build workload uses (c-fixtures/lua/kernels.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local kernels = dofile(here .. "../../lua/kernels.lua")
local fib, shuffled, words = kernels.fib, kernels.shuffled, kernels.words

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
