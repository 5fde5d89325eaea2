/* Policy libraries built outside the package (src/pysched/policy/build.py builds
 * them): loading one with dlopen, its ABI and table check
 * (ps_policy_library_check), its activation, and the lookup of presets
 * among the built-in ones and those of the libraries loaded (the list is
 * the module state's). */
#include <dlfcn.h>

#include "binding.h"

/* ---- presets: the built-in ones, then those of the active libraries ---- */

/* Preset `name` of library lib, or NULL. */
static const psPreset *library_preset(const psPolicyLibrary *lib, const char *name) {
  for (int k = 0; k < lib->npolicies; k++)
    for (int i = 0; i < lib->policies[k]->npresets; i++)
      if (!strcmp(lib->policies[k]->presets[i].name, name)) return &lib->policies[k]->presets[i];
  return NULL;
}

/* Preset i of all those known now, in the order presets() lists them:
 * built-in, then the active libraries' in load order; NULL past the end. */
const psPreset *known_preset(const module_state *st, int i) {
  if (i < ps_npresets()) return ps_preset(i);
  i -= ps_npresets();
  for (int l = 0; l < st->nlibs; l++) {
    const psPolicyLibrary *lib = st->libs[l].lib;
    for (int k = 0; st->libs[l].active && k < lib->npolicies; k++) {
      if (i < lib->policies[k]->npresets) return &lib->policies[k]->presets[i];
      i -= lib->policies[k]->npresets;
    }
  }
  return NULL;
}

/* The preset `name`, or NULL with KeyError listing the known ones. */
const psPreset *find_preset(const module_state *st, const char *name) {
  const psPreset *p;
  for (int i = 0; (p = known_preset(st, i)); i++)
    if (!strcmp(p->name, name)) return p;
  PyObject *names = PyList_New(0);
  for (int i = 0; names && (p = known_preset(st, i)); i++) {
    PyObject *s = PyUnicode_FromString(p->name);
    if (!s || PyList_Append(names, s)) Py_CLEAR(names);
    Py_XDECREF(s);
  }
  if (names) {
    PyErr_Format(PyExc_KeyError, "unknown preset '%s'; known presets: %R", name, names);
    Py_DECREF(names);
  }
  return NULL;
}

PyObject *preset_tuple(const psPreset *p) {
  return Py_BuildValue("(sszi)", p->name, p->policy->name, p->doc, ps_preset_hz(p));
}

/* The preset a snapshot names: library `lib`'s (an index into the loaded
 * libraries, active or not) or, when lib is -1, the one known by that name
 * now; NULL with ValueError. */
const psPreset *snapshot_preset(const module_state *st, const Py_buffer *view, int lib) {
  char name[PS_SNAPSHOT_NAME], err[PS_ERRLEN];
  if (ps_snapshot_preset_name(view->buf, (size_t)view->len, name, err, sizeof err)) {
    PyErr_SetString(PyExc_ValueError, err);
    return NULL;
  }
  if (lib < -1 || lib >= st->nlibs) {
    PyErr_Format(PyExc_ValueError, "library=%d: no such policy library (%d loaded)", lib, st->nlibs);
    return NULL;
  }
  const psPreset *pre = lib >= 0 ? library_preset(st->libs[lib].lib, name) : NULL;
  for (int i = 0; lib < 0 && !pre && known_preset(st, i); i++)
    if (!strcmp(known_preset(st, i)->name, name)) pre = known_preset(st, i);
  if (!pre)
    PyErr_Format(PyExc_ValueError, "the snapshot is of preset '%s', which %s", name,
                 lib >= 0 ? "its policy library does not declare"
                          : "is not known here (a C policy: pysched.build_policy loads it)");
  return pre;
}

/* ---- policy libraries (src/pysched/policy/build.py builds them) ---- */

/* load_policy_library(path, origin) -> (index, [preset tuples]): open the
 * shared library at path, built from the source `origin`, and check it
 * (ABI, sizes, tables) before anything of it is used.  It is loaded
 * inactive: activate_policy_library makes its presets known by name.
 * Loading a library already loaded returns its index again.
 *
 * RTLD_LOCAL keeps its symbols out of the process's namespace; the engine
 * functions it calls resolve because it is linked against this very file
 * (build.py says why).  RTLD_NOW reports a missing symbol here, not in the
 * middle of a run. */
PyObject *mod_load_policy_library(PyObject *self, PyObject *args) {
  module_state *st = PyModule_GetState(self);
  PyObject *path_obj;
  const char *origin;
  if (!PyArg_ParseTuple(args, "O&s", PyUnicode_FSConverter, &path_obj, &origin)) return NULL;
  const char *path = PyBytes_AS_STRING(path_obj);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    PyErr_Format(st->config_error, "cannot load the policy library of %s: %s", origin, dlerror());
    Py_DECREF(path_obj);
    return NULL;
  }
  Py_DECREF(path_obj);
  int index = -1;
  for (int l = 0; l < st->nlibs; l++)
    if (st->libs[l].handle == handle) index = l;
  if (index >= 0) {
    dlclose(handle);  /* the loader counts opens: keep one */
  } else {
    const psPolicyLibrary *lib = dlsym(handle, PS_POLICY_LIBRARY_SYMBOL);
    char err[PS_ERRLEN];
    if (!lib) {
      PyErr_Format(st->config_error, "%s is not a pysched policy library: it does not define "
                   "%s (end it with PS_POLICY_LIBRARY(&your_policy))", origin,
                   PS_POLICY_LIBRARY_SYMBOL);
      dlclose(handle);
      return NULL;
    }
    if (ps_policy_library_check(lib, origin, err, sizeof err)) {
      PyErr_SetString(st->config_error, err);
      dlclose(handle);
      return NULL;
    }
    if (st->nlibs == st->cap_libs) {
      int cap = st->cap_libs ? 2 * st->cap_libs : 8;
      loaded_library *l = PyMem_Realloc(st->libs, (size_t)cap * sizeof *l);
      if (!l) {
        dlclose(handle);
        return PyErr_NoMemory();
      }
      st->libs = l;
      st->cap_libs = cap;
    }
    char *copy = PyMem_Malloc(strlen(origin) + 1);
    if (!copy) {
      dlclose(handle);
      return PyErr_NoMemory();
    }
    strcpy(copy, origin);
    st->libs[st->nlibs] = (loaded_library){handle, lib, copy, 0};
    index = st->nlibs++;
  }
  const psPolicyLibrary *lib = st->libs[index].lib;
  PyObject *presets = PyList_New(0);
  for (int k = 0; presets && k < lib->npolicies; k++)
    for (int i = 0; presets && i < lib->policies[k]->npresets; i++) {
      PyObject *t = preset_tuple(&lib->policies[k]->presets[i]);
      if (!t || PyList_Append(presets, t)) Py_CLEAR(presets);
      Py_XDECREF(t);
    }
  return presets ? Py_BuildValue("(iN)", index, presets) : NULL;
}

/* activate_policy_library(index, replaces=-1): the library's presets become
 * known by name, in place of those of library `replaces` (an earlier
 * version of it), which stays loaded for the simulators made from it.  A
 * preset name that is built in or that another active library declares is
 * refused (ConfigError), and nothing changes. */
PyObject *mod_activate_policy_library(PyObject *self, PyObject *args) {
  module_state *st = PyModule_GetState(self);
  int index, replaces = -1;
  if (!PyArg_ParseTuple(args, "i|i", &index, &replaces)) return NULL;
  if (index < 0 || index >= st->nlibs || replaces < -1 || replaces >= st->nlibs)
    return raise_value("no such policy library");
  const loaded_library *new = &st->libs[index];
  for (int k = 0; k < new->lib->npolicies; k++)
    for (int i = 0; i < new->lib->policies[k]->npresets; i++) {
      const char *name = new->lib->policies[k]->presets[i].name;
      if (ps_preset_find(name)) {
        PyErr_Format(st->config_error, "%s declares preset '%s', which is a built-in preset: "
                     "choose another name", new->origin, name);
        return NULL;
      }
      for (int l = 0; l < st->nlibs; l++)
        if (l != index && l != replaces && st->libs[l].active &&
            library_preset(st->libs[l].lib, name)) {
          PyErr_Format(st->config_error, "%s declares preset '%s', which %s already declares: "
                       "choose another name", new->origin, name, st->libs[l].origin);
          return NULL;
        }
    }
  if (replaces >= 0) st->libs[replaces].active = 0;
  st->libs[index].active = 1;
  Py_RETURN_NONE;
}
