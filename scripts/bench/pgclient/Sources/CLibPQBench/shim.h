#ifndef HEARTH_CLIBPQ_SHIM_H
#define HEARTH_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
