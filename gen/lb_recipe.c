/*
** lb_recipe.c: load a recipe in a Lua sandbox and validate it.
**
** A recipe is a Lua chunk that calls one function per section:
**   weights { bits = 4, packing = "gemlite32" }
** Each section function is C: it checks its argument at once and raises
** errors with luaL_error, so a message carries the file and the line of
** the section that is wrong.  The chunk sees no io, os, package, debug,
** load or bytecode, nor the library functions that can loop in C without
** bound (string patterns, table.move); memory, executed instructions and
** wall-clock time are bounded.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lb_err.h"
#include "lb_recipe.h"
#include "lb_where.h"

#define MEM_LIMIT   (8u << 20)     /* bytes a recipe may allocate */
#define INSN_LIMIT  (10000000L)    /* VM instructions a recipe may run */
#define HOOK_EVERY  1000
/* Wall-clock bound: one VM instruction or library call can cost O(memory
** limit) (s .. "x" on a 4 MiB string, s:rep(n), plain find), so counting
** instructions alone does not bound the time a recipe takes. */
#define TIME_LIMIT  2              /* seconds a recipe may run */
#define TIME_CHECK  (64u << 10)    /* allocations this big check the clock */
#define TEXT_LIMIT  (1 << 20)      /* bytes of recipe text */

typedef struct sandbox {
  size_t used, limit;
  long insns;
  int line;                /* last line the chunk executed */
  int expired;             /* TIME_LIMIT passed (allocations then fail) */
  double deadline;         /* CLOCK_MONOTONIC seconds; 0 before the run */
  const char *file;
  lb_recipe *r;
} sandbox;

static double mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int expired(sandbox *s) {
  if (!s->expired && s->deadline > 0 && mono() > s->deadline) s->expired = 1;
  return s->expired;
}

static void *sb_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  sandbox *s = ud;
  size_t old = ptr ? osize : 0;
  void *np;
  if (nsize == 0) {
    s->used -= old;
    free(ptr);
    return NULL;
  }
  if (nsize > old && s->used + (nsize - old) > s->limit) return NULL;
  if (nsize >= old + TIME_CHECK && expired(s)) return NULL;
  np = realloc(ptr, nsize);
  if (np == NULL) return NULL;
  s->used = s->used - old + nsize;
  return np;
}

static sandbox *getsb(lua_State *L) {
  void *ud;
  lua_getallocf(L, &ud);
  return ud;
}

/* Line events keep the position for errors that Lua reports without one
** (memory); count events enforce the instruction budget. */
static void sb_hook(lua_State *L, lua_Debug *ar) {
  sandbox *s = getsb(L);
  if (ar->event == LUA_HOOKLINE) {
    s->line = ar->currentline;
    return;
  }
  s->insns += HOOK_EVERY;
  if (s->insns > INSN_LIMIT) {
    lua_pushfstring(L, "%s:%d: recipe ran more than %d instructions "
                    "(endless loop?)", s->file, s->line, (int)INSN_LIMIT);
    lua_error(L);
  }
  if (expired(s)) {
    lua_pushfstring(L, "%s:%d: recipe ran longer than %d s", s->file,
                    s->line, TIME_LIMIT);
    lua_error(L);
  }
}

/* ---- names ------------------------------------------------------------ */

static const char *const dtype_names[] = {"f16", "bf16", "f32", NULL};
static const char *const section_names[] = {
  "name", "activations", "weights", "scales", "zeros", "dequant",
  "accumulator", "output", "epilogue"
};
static const char *const dequant_texts[] = {
  "(q - z) * s", "q * s + z", "q * s", NULL
};

const char *lb_dtype_name(lb_dtype t) { return dtype_names[t]; }
int lb_dtype_size(lb_dtype t) { return t == LB_F32 ? 4 : 2; }
const char *lb_dequant_text(lb_dequant d) { return dequant_texts[d]; }
const char *lb_section_name(lb_section s) { return section_names[s]; }

/* The string at idx, refused where it holds a NUL byte: compared as a C
** string, "f16\0junk" would pass for "f16" and a field named "bits\0x"
** for bits. */
static const char *plain(lua_State *L, int idx, const char *what) {
  size_t n;
  const char *s = lua_tolstring(L, idx, &n);
  if (s != NULL && strlen(s) != n)
    luaL_error(L, "%s: a string with a NUL byte in it ('%s' then %d more "
               "bytes)", what, s, (int)(n - strlen(s)));
  return s;
}

static int find(const char *s, const char *const list[]) {
  int i;
  for (i = 0; list[i]; i++)
    if (strcmp(s, list[i]) == 0) return i;
  return -1;
}

static const char *joined(lua_State *L, const char *const list[]) {
  luaL_Buffer b;
  int i;
  luaL_buffinit(L, &b);
  for (i = 0; list[i]; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addchar(&b, '\'');
    luaL_addstring(&b, list[i]);
    luaL_addchar(&b, '\'');
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

/* ---- argument checks (arg 1 of a section function) -------------------- */

static int callline(lua_State *L) {
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar))
    return ar.currentline > 0 ? ar.currentline : 1;
  return 1;
}

/* Marks section sec as given, refusing a second time. */
static lb_recipe *begin(lua_State *L, lb_section sec, int argtype) {
  lb_recipe *r = getsb(L)->r;
  const char *what = argtype == LUA_TTABLE ? "a table" : "a string";
  if (r->line[sec])
    luaL_error(L, "section '%s' given twice (first at line %d)",
               section_names[sec], r->line[sec]);
  if (lua_gettop(L) != 1)
    luaL_error(L, "section '%s' takes one argument (%s), got %d",
               section_names[sec], what, lua_gettop(L));
  if (lua_type(L, 1) != argtype)
    luaL_error(L, "section '%s' takes %s, got %s", section_names[sec], what,
               luaL_typename(L, 1));
  r->line[sec] = callline(L);
  return r;
}

static void known_fields(lua_State *L, const char *sec,
                         const char *const known[]) {
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "%s: fields are named (like bits = 4), got a %s key",
                 sec, luaL_typename(L, -2));
    if (find(plain(L, -2, sec), known) < 0) {
      /* joined() pushes: take the key first */
      const char *key = lua_tostring(L, -2);
      const char *list = joined(L, known);
      luaL_error(L, "%s: unknown field '%s' (known: %s)", sec, key, list);
    }
    lua_pop(L, 1);
  }
}

/* Pushes field f of the table at 1; returns 0 (and pushes nothing) if nil. */
static int field(lua_State *L, const char *f) {
  if (lua_getfield(L, 1, f) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  return 1;
}

static int int_field(lua_State *L, const char *sec, const char *f, int def,
                     int lo, int hi) {
  lua_Integer v;
  int ok;
  if (!field(L, f)) {
    if (def == -1) luaL_error(L, "%s: field '%s' is required", sec, f);
    return def;
  }
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_error(L, "%s.%s must be an integer, got %s", sec, f,
               luaL_typename(L, -1));
  v = lua_tointegerx(L, -1, &ok);
  if (!ok)
    luaL_error(L, "%s.%s must be an integer, got %s", sec, f,
               lua_tostring(L, -1));
  if (v < lo || v > hi)
    luaL_error(L, "%s.%s must be in %d..%d, got %I", sec, f, lo, hi,
               (LUAI_UACINT)v);   /* (whole: a cast would wrap it) */
  lua_pop(L, 1);
  return (int)v;
}

static int bool_field(lua_State *L, const char *sec, const char *f, int def) {
  int v;
  if (!field(L, f)) return def;
  if (lua_type(L, -1) != LUA_TBOOLEAN)
    luaL_error(L, "%s.%s must be true or false, got %s", sec, f,
               luaL_typename(L, -1));
  v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* Checks s against the supported names, then against names that are
** planned (valid later, refused now with a clear word). */
static int choice(lua_State *L, const char *what, const char *s,
                  const char *const ok[], const char *const later[]) {
  int i = find(s, ok);
  if (i >= 0) return i;
  if (later && find(s, later) >= 0)
    luaL_error(L, "%s '%s' is not supported yet (supported: %s)", what, s,
               joined(L, ok));
  return luaL_error(L, "%s must be one of %s, got '%s'", what, joined(L, ok),
                    s);
}

static int str_field(lua_State *L, const char *sec, const char *f,
                     const char *def, const char *const ok[],
                     const char *const later[]) {
  char what[64];
  const char *s = def;
  int v;
  snprintf(what, sizeof what, "%s.%s", sec, f);
  if (field(L, f)) {
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "%s must be a string, got %s", what, luaL_typename(L, -1));
    s = plain(L, -1, what);
  } else {
    lua_pushnil(L);
  }
  v = choice(L, what, s, ok, later);
  lua_pop(L, 1);
  return v;
}

/* ---- sections ----------------------------------------------------------- */

static int s_name(lua_State *L) {
  lb_recipe *r = begin(L, LB_S_NAME, LUA_TSTRING);
  size_t n, i;
  const char *s = lua_tolstring(L, 1, &n);
  if (n == 0 || n >= sizeof r->name)
    luaL_error(L, "name must be 1..%d characters", (int)sizeof r->name - 1);
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
      luaL_error(L, "name '%s' may hold only letters, digits, '_', '-', '.'",
                 s);
  }
  memcpy(r->name, s, n + 1);
  return 0;
}

static const char *const act_later[] = {"s8", "fp8e4m3", NULL};
static const char *const act_ok[] = {"f16", "bf16", NULL};

static int s_activations(lua_State *L) {
  lb_recipe *r = begin(L, LB_S_ACT, LUA_TSTRING);
  r->act = (lb_dtype)choice(L, "activations", plain(L, 1, "activations"),
                            act_ok, act_later);
  return 0;
}

static int s_weights(lua_State *L) {
  static const char *const known[] = {"bits", "signed", "packing", NULL};
  static const char *const packings[] = {"gemlite32", NULL};
  static const char *const later[] = {"int8", "gptq", "awq", "marlin",
                                      "interleaved", NULL};
  lb_recipe *r = begin(L, LB_S_WEIGHTS, LUA_TTABLE);
  known_fields(L, "weights", known);
  r->bits = int_field(L, "weights", "bits", -1, 1, 8);
  r->is_signed = bool_field(L, "weights", "signed", 0);
  r->packing = (lb_packing)str_field(L, "weights", "packing", "gemlite32",
                                     packings, later);
  return 0;
}

static int s_scales(lua_State *L) {
  static const char *const known[] = {"group", "dtype", NULL};
  lb_recipe *r = begin(L, LB_S_SCALES, LUA_TTABLE);
  known_fields(L, "scales", known);
  if (!field(L, "group"))
    luaL_error(L, "scales: field 'group' is required (a multiple of 32, "
               "or \"channel\")");
  if (lua_type(L, -1) == LUA_TSTRING) {
    if (strcmp(plain(L, -1, "scales.group"), "channel") != 0)
      luaL_error(L, "scales.group must be a multiple of 32 or \"channel\", "
                 "got '%s'", lua_tostring(L, -1));
    r->group = 0;
    lua_pop(L, 1);
  } else {
    lua_pop(L, 1);
    r->group = int_field(L, "scales", "group", -1, 32, 1 << 20);
    if (r->group % 32 != 0)
      luaL_error(L, "scales.group must be a multiple of 32, got %d",
                 r->group);
  }
  r->sdtype = (lb_dtype)str_field(L, "scales", "dtype", "f16", dtype_names,
                                  NULL);
  return 0;
}

static int s_zeros(lua_State *L) {
  static const char *const known[] = {"kind", "dtype", NULL};
  static const char *const kinds[] = {"float", NULL};
  static const char *const later[] = {"int", NULL};
  lb_recipe *r = begin(L, LB_S_ZEROS, LUA_TTABLE);
  known_fields(L, "zeros", known);
  str_field(L, "zeros", "kind", "float", kinds, later);
  r->zeros = 1;
  r->zdtype = (lb_dtype)str_field(L, "zeros", "dtype", "f16", dtype_names,
                                  NULL);
  return 0;
}

static int s_dequant(lua_State *L) {
  lb_recipe *r = begin(L, LB_S_DEQUANT, LUA_TSTRING);
  r->dequant = (lb_dequant)choice(L, "dequant", plain(L, 1, "dequant"),
                                  dequant_texts, NULL);
  return 0;
}

static int s_accumulator(lua_State *L) {
  static const char *const ok[] = {"f32", NULL};
  static const char *const later[] = {"f16", "s32", NULL};
  lb_recipe *r = begin(L, LB_S_ACC, LUA_TSTRING);
  choice(L, "accumulator", plain(L, 1, "accumulator"), ok, later);
  r->acc = LB_F32;
  return 0;
}

static int s_output(lua_State *L) {
  static const char *const later[] = {"s8", "s32", NULL};
  lb_recipe *r = begin(L, LB_S_OUTPUT, LUA_TSTRING);
  r->out = (lb_dtype)choice(L, "output", plain(L, 1, "output"), dtype_names,
                            later);
  return 0;
}

static int s_epilogue(lua_State *L) {
  static const char *const known[] = {"bias", NULL};
  lb_recipe *r = begin(L, LB_S_EPILOGUE, LUA_TTABLE);
  known_fields(L, "epilogue", known);
  r->bias = bool_field(L, "epilogue", "bias", 0);
  return 0;
}

static const lua_CFunction section_fns[LB_NSECTION] = {
  s_name, s_activations, s_weights, s_scales, s_zeros, s_dequant,
  s_accumulator, s_output, s_epilogue
};

/* Reading or writing an unknown global is almost always a misspelt
** section or a field written outside its table; say so. */
static int env_index(lua_State *L) {
  const char *key = luaL_tolstring(L, 2, NULL);
  const char *list = joined(L, (const char *const[]){
      "name", "activations", "weights", "scales", "zeros", "dequant",
      "accumulator", "output", "epilogue", NULL});
  return luaL_error(L, "unknown name '%s' (sections: %s)", key, list);
}

static int env_newindex(lua_State *L) {
  return luaL_error(L, "assignment to global '%s': recipe fields go inside "
                    "sections (weights { bits = 4 }); use 'local' for helper "
                    "variables", luaL_tolstring(L, 2, NULL));
}

/* string.rep loops n times in C even when the result is empty, where no
** hook runs: answer that case at once; otherwise the real rep allocates the
** whole result first, so the memory limit bounds its work. */
static int safe_rep(lua_State *L) {
  size_t l, lsep;
  lua_Integer n;
  luaL_checklstring(L, 1, &l);
  n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (n <= 0 || l + lsep == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* Builds the chunk's _ENV: safe base functions, four pure libraries and
** the section functions, nothing else. */
static void make_env(lua_State *L) {
  static const char *const base[] = {
    "assert", "error", "ipairs", "next", "pairs", "rawequal", "rawget",
    "rawlen", "select", "tonumber", "tostring", "type", "_VERSION", NULL
  };
  static const luaL_Reg libs[] = {
    {LUA_GNAME, luaopen_base}, {LUA_STRLIBNAME, luaopen_string},
    {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
    {LUA_UTF8LIBNAME, luaopen_utf8}, {NULL, NULL}
  };
  const luaL_Reg *lib;
  int i;
  for (lib = libs; lib->func; lib++) {
    luaL_requiref(L, lib->name, lib->func, 1);
    lua_pop(L, 1);
  }
  /* string.dump makes bytecode; strings reach it through their metatable */
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  /* pattern matching backtracks in C without bound (s:find(".-.-.-b")),
  ** out of reach of the hook; recipes have no use for it */
  {
    static const char *const gone[] = {"find", "match", "gmatch", "gsub",
                                       NULL};
    for (i = 0; gone[i]; i++) {
      lua_pushnil(L);
      lua_setfield(L, -2, gone[i]);
    }
  }
  lua_getfield(L, -1, "rep");
  lua_pushcclosure(L, safe_rep, 1);
  lua_setfield(L, -2, "rep");
  lua_pop(L, 1);
  /* table.move(t, 1, 1 << 62, 2) copies nils for ever in C */
  lua_getglobal(L, LUA_TABLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "move");
  lua_pop(L, 1);
  /* a recipe must describe the same format every time it is loaded */
  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "random");
  lua_pushnil(L);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);

  lua_newtable(L);
  for (i = 0; base[i]; i++) {
    lua_getglobal(L, base[i]);
    lua_setfield(L, -2, base[i]);
  }
  for (lib = libs + 1; lib->func; lib++) {
    lua_getglobal(L, lib->name);
    lua_setfield(L, -2, lib->name);
  }
  for (i = 0; i < LB_NSECTION; i++) {
    lua_pushcfunction(L, section_fns[i]);
    lua_setfield(L, -2, section_names[i]);
  }
  lua_newtable(L);
  lua_pushcfunction(L, env_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, env_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
}

/* The parser reads the text a line at a time, so that sandbox.line
** follows it: some parser errors carry no position (C stack overflow
** from deeply nested brackets). */
typedef struct feed {
  const char *p, *end;
  sandbox *s;
} feed;

static const char *feed_line(lua_State *L, void *ud, size_t *size) {
  feed *f = ud;
  const char *start = f->p, *nl;
  if (f->p == f->end) {
    *size = 0;
    return NULL;
  }
  nl = memchr(f->p, '\n', (size_t)(f->end - f->p));
  f->p = nl ? nl + 1 : f->end;
  f->s->line++;
  *size = (size_t)(f->p - start);
  return start;
}

/* Runs in protected mode: everything that can raise a Lua error. */
static int run_chunk(lua_State *L) {
  const char *text = lua_touserdata(L, 1);
  size_t len = (size_t)lua_tointeger(L, 2);
  const char *chunk = lua_tostring(L, 3);
  feed f;
  make_env(L);                                   /* 4: env */
  if (len > 0 && text[0] == LUA_SIGNATURE[0])
    return luaL_error(L, "%s:1: recipes must be Lua source text, not "
                      "precompiled bytecode", chunk + 1);
  f.p = text;
  f.end = text + len;
  f.s = getsb(L);
  if (lua_load(L, feed_line, &f, chunk, "t") != LUA_OK)
    return lua_error(L);
  f.s->line = 0;                   /* from here the line hook keeps it */
  lua_pushvalue(L, 4);
  lua_setupvalue(L, -2, 1);
  lua_sethook(L, sb_hook, LUA_MASKLINE | LUA_MASKCOUNT, HOOK_EVERY);
  lua_call(L, 0, 0);
  lua_sethook(L, NULL, 0, 0);
  return 0;
}

static int count_lines(const char *text, size_t len) {
  int n = 1;
  size_t i;
  for (i = 0; i + 1 < len; i++)
    if (text[i] == '\n') n++;
  return n;
}

/* Checks between sections, once the chunk has run. */
static lb_status finish(lb_recipe *r, const char *file, int last) {
  static const lb_section required[] = {
    LB_S_NAME, LB_S_ACT, LB_S_WEIGHTS, LB_S_SCALES, LB_S_DEQUANT
  };
  size_t i;
  for (i = 0; i < sizeof required / sizeof required[0]; i++)
    if (!r->line[required[i]])
      return lb_fail(LB_ERECIPE, "%s:%d: recipe has no '%s' section", file,
                     last, section_names[required[i]]);
  if (r->dequant != LB_DQ_MUL && !r->zeros)
    return lb_fail(LB_ERECIPE, "%s:%d: dequant '%s' uses z, but the recipe "
                   "has no zeros section", file, r->line[LB_S_DEQUANT],
                   dequant_texts[r->dequant]);
  if (r->dequant == LB_DQ_MUL && r->zeros)
    return lb_fail(LB_ERECIPE, "%s:%d: zeros are given but dequant 'q * s' "
                   "does not use them", file, r->line[LB_S_ZEROS]);
  if (!r->line[LB_S_ACC]) r->acc = LB_F32;
  if (!r->line[LB_S_OUTPUT]) r->out = r->act;
  return LB_OK;
}

/* Where msg begins with a position in the chunk, the bytes of its name:
** the file as given, or as Lua writes a name longer than LUA_IDSIZE - 1
** with its '@': "..." and the tail (luaO_chunkid); else 0. */
static size_t position(const char *msg, const char *file) {
  size_t n = strlen(file);
  const size_t keep = LUA_IDSIZE - 4;
  if (strncmp(msg, file, n) == 0 && msg[n] == ':') return n;
  if (n + 1 <= LUA_IDSIZE) return 0;
  return strncmp(msg, "...", 3) == 0 &&
                 strncmp(msg + 3, file + n - keep, keep) == 0 &&
                 msg[3 + keep] == ':'
             ? 3 + keep
             : 0;
}

/* Lua's message with the file's name in full, as given (the docs promise
** the path, and a tail may end inside a directory's name).  Some Lua
** errors carry no position (those raised inside C functions, like
** string.rep's "resulting string too large" or next's "invalid key", and
** the parser's C stack overflow): they get the last line run. */
static lb_status lua_message(const char *msg, const lb_recipe *r, int line) {
  const size_t at = position(msg, r->file);
  if (at > 0) return lb_fail(LB_ERECIPE, "%s%s", r->file, msg + at);
  return lb_fail(LB_ERECIPE, "%s:%d: %s", r->file, line ? line : 1, msg);
}

lb_status lb_recipe_load_text(const char *chunkname, const char *text,
                              size_t len, lb_recipe **out) {
  sandbox sb;
  lua_State *L;
  lb_recipe *r;
  lb_status st = LB_OK;
  int rc;
  if (out) *out = NULL;
  if (chunkname == NULL || text == NULL || out == NULL)
    return lb_fail(LB_EARG, "lb_recipe_load_text: null argument");
  if (strlen(chunkname) >= sizeof r->file)   /* (messages name it whole) */
    return lb_fail(LB_EARG, "lb_recipe_load_text: a name of %zu bytes; at "
                   "most %zu", strlen(chunkname), sizeof r->file - 1);
  r = calloc(1, sizeof *r);
  if (r == NULL) return lb_fail(LB_EMEM, "%s: no memory", chunkname);
  snprintf(r->file, sizeof r->file, "%s", chunkname);
  memset(&sb, 0, sizeof sb);
  sb.limit = MEM_LIMIT;
  sb.file = r->file;
  sb.r = r;
  L = lua_newstate(sb_alloc, &sb);
  if (L == NULL) {
    free(r);
    return lb_fail(LB_EMEM, "%s: cannot create a Lua state", chunkname);
  }
  lua_pushcfunction(L, run_chunk);
  lua_pushlightuserdata(L, (void *)text);
  lua_pushinteger(L, (lua_Integer)len);
  lua_pushfstring(L, "@%s", chunkname);
  sb.deadline = mono() + TIME_LIMIT;
  rc = lua_pcall(L, 3, 0, 0);
  if (rc != LUA_OK && sb.expired)
    st = lb_fail(LB_ERECIPE, "%s:%d: recipe ran longer than %d s", r->file,
                 sb.line ? sb.line : 1, TIME_LIMIT);
  else if (rc == LUA_ERRMEM)
    st = lb_fail(LB_ERECIPE, "%s:%d: recipe used more than %u MiB of memory",
                 r->file, sb.line ? sb.line : 1, MEM_LIMIT >> 20);
  else if (rc != LUA_OK && lua_type(L, -1) == LUA_TSTRING)
    st = lua_message(lua_tostring(L, -1), r, sb.line);
  else if (rc != LUA_OK)
    st = lb_fail(LB_ERECIPE, "%s:%d: recipe raised an error that is not a "
                 "string (a %s)", r->file, sb.line ? sb.line : 1,
                 luaL_typename(L, -1));
  lua_close(L);
  if (st == LB_OK) st = finish(r, r->file, count_lines(text, len));
  if (st != LB_OK) {
    free(r);
    return st;
  }
  *out = r;
  return LB_OK;
}

/* Reads f to its end: the size that stat or ftell reports is wrong for
** pipes, terminals and /proc files (which say 0).  Reads at most TEXT_LIMIT + 1
** bytes, so a longer file shows as too long without being read whole. */
static lb_status read_all(FILE *f, const char *path, char **text,
                          size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1), *nb;
  while (buf != NULL) {
    size_t want = cap - n, got = fread(buf + n, 1, want, f);
    n += got;
    if (got < want || cap > TEXT_LIMIT) break;
    cap = cap * 2 > TEXT_LIMIT ? TEXT_LIMIT + 1 : cap * 2;
    if ((nb = realloc(buf, cap + 1)) == NULL) free(buf);
    buf = nb;
  }
  if (buf == NULL) return lb_fail(LB_EMEM, "%s: no memory", path);
  if (ferror(f)) {
    int e = errno;
    free(buf);
    return lb_fail(LB_EIO, "%s: cannot read recipe: %s", path, strerror(e));
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return LB_OK;
}

static lb_status too_long(FILE *f, const char *path) {
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode))
    return lb_fail(LB_EIO, "%s: recipe is %lld bytes, more than the limit "
                   "of 1 MiB (%d bytes)", path, (long long)sb.st_size,
                   TEXT_LIMIT);
  return lb_fail(LB_EIO, "%s: recipe is more than the limit of 1 MiB (%d "
                 "bytes)", path, TEXT_LIMIT);
}

/* Where a recipe named without a path is looked for: each directory of
** $LOWBIT_RECIPE_PATH (':'-separated), then the installed recipes where
** the library lies (lb_where), then LB_RECIPE_DIR, where they were
** configured to go: "" in a wheel, whose build prefix is gone. */
#ifndef LB_RECIPE_DIR
#define LB_RECIPE_DIR "/usr/local/share/lowbit/recipes"
#endif

/* A bare name ("a16w4_g128": no '/', no ".lua") names a recipe on the
** search path; *found gets its file.  0 when it is not a bare name. */
static int is_name(const char *s) {
  size_t n = strlen(s);
  return n > 0 && strchr(s, '/') == NULL &&
         !(n >= 4 && strcmp(s + n - 4, ".lua") == 0) && strcmp(s, "-") != 0;
}

/* 1 when dir holds name.lua, a file; found then names it. */
static int in_dir(const char *dir, const char *name, char *found, size_t len) {
  struct stat sb;
  int n = snprintf(found, len, "%s/%s.lua", dir, name);
  return n > 0 && (size_t)n < len && stat(found, &sb) == 0 &&
         S_ISREG(sb.st_mode);
}

/* The same directory, by another name too (a link, "lib/../share"). */
static int same_dir(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return strcmp(a, b) == 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* 1 when dir is one of the ':'-separated directories of path. */
static int on_path(const char *path, const char *dir) {
  char copy[4096], *d, *save = NULL;
  snprintf(copy, sizeof copy, "%s", path);
  for (d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
    if (same_dir(d, dir)) return 1;
  return 0;
}

/* The message names exactly the directories looked in: a folder that was
** not searched (a configured prefix that does not exist, skipped as a
** repeat) would send the user to the wrong place. */
static lb_status find_named(const char *name, char *found, size_t len) {
  const char *e = getenv("LOWBIT_RECIPE_PATH");
  char dirs[LB_WHERE_MAX + 1][LB_WHERE_LEN], from[LB_WHERE_LEN];
  char copy[4096], list[1024], *d, *save = NULL;
  size_t used = 0;
  int i, j, n;
  if (e == NULL) e = "";
  snprintf(copy, sizeof copy, "%s", e);
  for (d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
    if (in_dir(d, name, found, len)) return LB_OK;
  n = lb_where_recipes(dirs, LB_WHERE_MAX, from, sizeof from);
  if (LB_RECIPE_DIR[0] != '\0')
    snprintf(dirs[n++], LB_WHERE_LEN, "%s", LB_RECIPE_DIR);
  list[0] = '\0';
  for (i = 0; i < n; i++) {
    for (j = 0; j < i && !same_dir(dirs[j], dirs[i]); j++) {}
    if (j < i || on_path(e, dirs[i])) continue;   /* searched already */
    if (in_dir(dirs[i], name, found, len)) return LB_OK;
    if (used < sizeof list)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                               used ? " or " : "", dirs[i]);
  }
  if (used > 0)
    return lb_fail(LB_EIO, "%s: no such recipe file, and no %s.lua in "
                   "LOWBIT_RECIPE_PATH (%s) or %s", name, name,
                   *e ? e : "unset", list);
  if (n == 0)
    return lb_fail(LB_EIO, "%s: no such recipe file, and no %s.lua in "
                   "LOWBIT_RECIPE_PATH (%s); no installed recipes were "
                   "found beside %s", name, name, *e ? e : "unset",
                   from[0] ? from : "the library");
  return lb_fail(LB_EIO, "%s: no such recipe file, and no %s.lua in "
                 "LOWBIT_RECIPE_PATH (%s)", name, name, *e ? e : "unset");
}

lb_status lb_recipe_load(const char *path, lb_recipe **out) {
  struct stat sb;
  FILE *f;
  char *text = NULL, named[4200];
  size_t len = 0;
  lb_status st;
  if (out) *out = NULL;
  if (path == NULL || out == NULL)
    return lb_fail(LB_EARG, "lb_recipe_load: null argument");
  /* a file of that name in the working directory wins over the path */
  if (is_name(path) && stat(path, &sb) != 0) {
    if ((st = find_named(path, named, sizeof named)) != LB_OK) return st;
    path = named;
  }
  f = fopen(path, "rb");
  if (f == NULL)
    return lb_fail(LB_EIO, "%s: cannot open recipe: %s", path,
                   strerror(errno));
  /* a directory opens, and only reading it fails (EISDIR) */
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode))
    st = lb_fail(LB_EIO, "%s: is a directory, not a recipe file", path);
  else if ((st = read_all(f, path, &text, &len)) == LB_OK &&
           len > TEXT_LIMIT) {
    free(text);
    st = too_long(f, path);
  }
  fclose(f);
  if (st != LB_OK) return st;
  st = lb_recipe_load_text(path, text, len, out);
  free(text);
  return st;
}

void lb_recipe_free(lb_recipe *r) { free(r); }

const char *lb_recipe_name(const lb_recipe *r) { return r ? r->name : ""; }

lb_status lb_recipe_describe(const lb_recipe *r, lb_recipe_info *out) {
  static const char *const packings[] = {"gemlite32"};
  if (r == NULL || out == NULL)
    return lb_fail(LB_EARG, "lb_recipe_describe: null argument");
  memset(out, 0, sizeof *out);
  out->name = r->name;
  out->file = r->file;
  out->bits = r->bits;
  out->is_signed = r->is_signed;
  out->packing = packings[r->packing];
  out->group = r->group;
  out->activations = dtype_names[r->act];
  out->scales = dtype_names[r->sdtype];
  out->zeros = r->zeros ? dtype_names[r->zdtype] : NULL;
  out->dequant = dequant_texts[r->dequant];
  out->accumulator = dtype_names[r->acc];
  out->output = dtype_names[r->out];
  out->bias = r->bias;
  return LB_OK;
}
