#ifndef HEARTH_CSQLITE_SHIM_H
#define HEARTH_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT / SQLITE_STATIC are function-pointer casts Swift cannot import.
static const sqlite3_destructor_type HEARTH_SQLITE_TRANSIENT = (sqlite3_destructor_type)-1;
static const sqlite3_destructor_type HEARTH_SQLITE_STATIC = (sqlite3_destructor_type)0;
#endif
