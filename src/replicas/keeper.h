/*-------------------------------------------------------------------------
 *
 * keeper.h
 *	  The keeper background worker: moves the high-water mark ahead of the
 *	  clock and samples the wall clock, off the generators' hot path.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_KEEPER_H
#define UIDGEN_KEEPER_H

#include "fmgr.h"

extern void keeper_register(void);
extern PGDLLEXPORT void uidgen_keeper_main(Datum arg);

#endif							/* UIDGEN_KEEPER_H */
