/*-------------------------------------------------------------------------
 *
 * spiplan.h
 *	  A statement prepared once and kept, for the background workers.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_SPIPLAN_H
#define UIDGEN_SPIPLAN_H

#include "executor/spi.h"

extern SPIPlanPtr spiplan_keep(const char *sql, int nargs, Oid *argtypes);

#endif							/* UIDGEN_SPIPLAN_H */
