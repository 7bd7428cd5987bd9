/* Lua 5.4 as a program of time steps for the paired harness (scripts/nas-paired --program lua):
 * each copy (plain and instrumented, the interpreter compiled into each) loads lua_steps.lua and
 * calls its `step` function STEPS times, each call one NAS_STEP, so compensation meets an
 * interpreter's many small routines, calls through pointers and longjmp, in one process with a
 * plain copy for ground truth. STEPS_SCRIPT is the script's path (the build defines it). */
#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"
#include <stdio.h>

#define STEPS 120

/* The step event: its inclusive time is one step's, its compensated time what the harness
 * compares with the plain copy's step. A loop (of one call), so that the pass keeps it however
 * small it is (pass/src/skip.rs). */
__attribute__((noinline)) void paired_step(lua_State *L, int calls) {
    for (int i = 0; i < calls; i++) {
        lua_getglobal(L, "step");
        lua_call(L, 0, 0);
    }
}

int main(void) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_dofile(L, STEPS_SCRIPT) != LUA_OK) {
        fprintf(stderr, "lua_steps: %s\n", lua_tostring(L, -1));
        return 1;
    }
    for (int i = 0; i < STEPS; i++)
        NAS_STEP(paired_step(L, 1));
    lua_close(L);
    return 0;
}
