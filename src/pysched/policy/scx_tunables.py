"""The file-scope variables of a sched_ext scheduler in the kernel's C
dialect (``#include <pysched/scx.h>``): its ``const volatile`` tunables as
its preset's parameters, its other scalar globals as each simulator's own.

In the kernel a loader sets a scheduler's ``const volatile`` globals before
it starts; here each simulator gives its own values, as parameters named
after the globals (after EEVDF's, the fallback's).  build_policy compiles
such a file through a copy in which each file-scope ``const volatile``
global becomes a thread-local one (``PS_SCX_TUNABLE``) that the op adapters
load from the simulator's parameters on entry, followed by the table of
those parameters; ``#line`` keeps the compiler's messages on the file's own
lines.  Their range is their type's (u64 and s64 within int64), their
default the compiled value.

The other file-scope variables, declared at the start of a line, are a
simulator's state too, as the kernel's globals are a scheduler's:

- a scalar of an integer type (``static u64 vtime_now;``, ``u64 nr_total,
  nr_locals;``, optional initializers): its declaration goes, and after the
  ``#include`` a macro of its name reads and writes a slot of the
  simulator's map area (pysched/scx_maps.h), set to its initializer before
  ops.init;
- any other (an array, a struct, a scalar of a type of the file's own):
  the declaration stays, renamed, as the initial value, and right after it
  a macro of its name stands for the simulator's copy, placed in the map
  area at its first use and copied from the initial value there.

``const`` ones are read-only and stay the library's.  A file-scope pointer
is refused at compile time, at its line: it would point into one
simulator's state or another's.
"""
import re

# internal to build_policy: nothing here is public
__all__ = []

# in the cache key: a change here rebuilds the libraries
VERSION = "scx-tunables 3"

_DIALECT = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<pysched/scx\.h>", re.M)

# the types a tunable may have, and their ranges as C expressions
_RANGES = {
    "bool": ("0", "1"), "u8": ("0", "UINT8_MAX"), "u16": ("0", "UINT16_MAX"),
    "u32": ("0", "UINT32_MAX"), "__u32": ("0", "UINT32_MAX"), "unsigned": ("0", "UINT32_MAX"),
    "unsigned int": ("0", "UINT32_MAX"), "u64": ("0", "INT64_MAX"), "__u64": ("0", "INT64_MAX"),
    "s8": ("INT8_MIN", "INT8_MAX"), "s16": ("INT16_MIN", "INT16_MAX"),
    "s32": ("INT32_MIN", "INT32_MAX"), "__s32": ("INT32_MIN", "INT32_MAX"),
    "int": ("INT32_MIN", "INT32_MAX"), "s64": ("INT64_MIN", "INT64_MAX"),
    "__s64": ("INT64_MIN", "INT64_MAX"),
}
_TYPES = "|".join(sorted((re.escape(t).replace(r"\ ", r"\s+") for t in _RANGES), key=len,
                         reverse=True))
# a file-scope declaration: at the start of a line, one name, a plain type
_TUNABLE = re.compile(r"^const\s+volatile\s+(?P<type>" + _TYPES + r")\s+(?P<name>[A-Za-z_]\w*)"
                      r"\s*(?:=\s*(?P<init>[^;]*?))?\s*;", re.M)

_DECLARATOR = r"[A-Za-z_]\w*(?:\s*=\s*[^;,]*?)?"
# scalars of an integer type, one or more to a declaration
_GLOBAL = re.compile(r"^(?:static\s+)?(?P<type>" + _TYPES + r")\s+(?P<decls>" + _DECLARATOR
                     + r"(?:\s*,\s*" + _DECLARATOR + r")*)\s*;", re.M)
# any other variable: one name, of a struct or union or a type named by one
# word, with array dimensions and an initializer maybe
_VAR = re.compile(r"^(?:static\s+)?(?P<type>(?:struct|union)\s+[A-Za-z_]\w*|[A-Za-z_]\w*)\s+"
                  r"(?P<name>[A-Za-z_]\w*)(?P<rest>(?:\s*\[[^\]\n]*\])*\s*"
                  r"(?:=\s*(?:\{[^;]*?\}|[^;{]*?))?\s*;)", re.M)
_POINTER = re.compile(r"^(?:static\s+)?(?:(?:struct|union)\s+)?(?P<type>[A-Za-z_]\w*)\s*\*[\s*]*"
                      r"(?P<name>[A-Za-z_]\w*)\s*(?:=[^;]*)?;", re.M)
# words that begin other file-scope lines than a variable's
_NOT_TYPES = {"return", "typedef", "extern", "struct", "union", "enum", "const", "volatile",
              "static", "inline", "goto", "else", "case", "break", "continue", "do", "register",
              "__always_inline", "void"}
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<pysched/scx\.h>[^\n]*$", re.M)


def is_dialect(text):
    """Whether a policy source (bytes) is written in the sched_ext dialect."""
    return _DIALECT.search(text) is not None


def transform(text, path):
    """The text to compile for a dialect source (bytes): its tunables made
    thread-local and loaded from the simulator's parameters, their table
    appended."""
    src = text.decode("utf-8", errors="replace")
    rows, loads = [], []
    for k, m in enumerate(_TUNABLE.finditer(src)):
        ctype = " ".join(m["type"].split())
        lo, hi = _RANGES[ctype]
        init = m["init"] or "0"
        rows.append(f'  {{"{m["name"]}", (int64_t)({init}), {lo}, {hi}, 0, "", '
                    f'"const volatile {ctype} {m["name"]} of {_c_string(path)}"}},')
        loads.append(f"  {m['name']} = ({ctype})v[{k}];")
    body = _TUNABLE.sub(_thread_local, src)
    globals_ = [(" ".join(m["type"].split()),) + _name_init(d)
                for m in _GLOBAL.finditer(body) for d in _split(m["decls"])]
    body = _GLOBAL.sub(lambda m: "\n" * m.group(0).count("\n"), body)
    body = _VAR.sub(lambda m: _own_copy(m, body, path), body)
    body = _POINTER.sub(_refuse_pointer, body)
    inc = _INCLUDE.search(body)
    line = body.count("\n", 0, inc.end()) + 1
    slots = "".join(f"#define {name} (*({ctype} *)ps_scx_global_({k}))\n"
                    for k, (ctype, name, _) in enumerate(globals_))
    body = body[:inc.end()] + f'\n{slots}#line {line + 1} "{_c_string(path)}"' + body[inc.end():]
    head = (f"#define PS_SCX_NTUNABLES {len(rows)}\n"
            f"#define PS_SCX_NGLOBALS {len(globals_)}\n"
            f'#line 1 "{_c_string(path)}"\n')
    tail = "\n/* the tunables, as parameters (pysched.policy.scx_tunables) */\n"
    if rows:
        tail += ("static const psParamInfo ps_scx_tunable_rows_[PS_SCX_NTUNABLES] = {\n"
                 + "\n".join(rows) + "\n};\n"
                 "static void ps_scx_load_tunables_(const psModel *m) {\n"
                 "  const int64_t *v = m->param + ps_policy_eevdf.nparams;\n"
                 + "\n".join(loads) + "\n}\n")
    if globals_:
        tail += ("/* the globals' initial values, each simulator's */\n"
                 "static void ps_scx_init_globals_(void) {\n"
                 + "".join(f"  {name} = {init};\n" for _, name, init in globals_ if init)
                 + "}\n")
    return (head + body + tail).encode()


def _split(decls):
    """The declarators of a declaration (no parentheses hold a comma: an
    initializer is a plain expression)."""
    return [d.strip() for d in decls.split(",")]


def _name_init(declarator):
    name, _, init = declarator.partition("=")
    return name.strip(), " ".join(init.split()) or None


def _own_copy(m, body, path):
    """A variable's declaration renamed to keep its initial value, then the
    macro that makes its name the simulator's copy, on lines of their own
    after which the numbering goes on."""
    if m["type"] in _NOT_TYPES:
        return m.group(0)
    name = m["name"]
    init = f"ps_scx_init_{name}"
    end = body.count("\n", 0, m.end()) + 1
    return (f"{m.group(0)[:m.start('name') - m.start()]}{init}{m['rest']}\n"
            f"static u64 ps_scx_vid_{name};\n"
            f"_Static_assert(sizeof {init} <= PS_SCX_MAP_BYTES, \"{name} is larger than the "
            f"simulator's map area (build with -DPS_SCX_MAP_BYTES=...)\");\n"
            f"#define {name} (*(__typeof__({init}) *)ps_scx_var_(&ps_scx_vid_{name}, \"{name}\", "
            f"&{init}, sizeof {init}))\n"
            f'#line {end + 1} "{_c_string(path)}"')


def _refuse_pointer(m):
    if m["type"] in _NOT_TYPES - {"void"}:
        return m.group(0)
    return (f'_Static_assert(0, "file-scope pointer {m["name"]}: a simulator cannot keep it '
            f'(keep the state in a map or a global)");' + "\n" * m.group(0).count("\n"))


def _thread_local(m):
    """The declaration with PS_SCX_TUNABLE for `const volatile`, on the
    same lines."""
    prefix = re.match(r"const\s+volatile", m.group(0)).group(0)
    return "PS_SCX_TUNABLE" + "\n" * prefix.count("\n") + m.group(0)[len(prefix):]


def _c_string(s):
    return str(s).replace("\\", "\\\\").replace('"', '\\"')
