/*-------------------------------------------------------------------------
 *
 * citusconn.h
 *	  A Citus worker's bounded libpq connection to its coordinator.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_CITUSCONN_H
#define UIDGEN_CITUSCONN_H

#include "libpq-fe.h"

extern PGresult *citusconn_exec(const char *sql, int nparams, const char *const *params);
extern PGresult *citusconn_exec_within(const char *sql, int nparams, const char *const *params,
									   int timeout_ms);

#endif							/* UIDGEN_CITUSCONN_H */
