/*-------------------------------------------------------------------------
 *
 * statefile.h
 *	  The durable high-water mark and settings record ($PGDATA/uidgen.state).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_STATEFILE_H
#define UIDGEN_STATEFILE_H

#include "shmem.h"

#define UIDGEN_STATE_FILE "uidgen.state"

extern uint64 statefile_load(UidgenShared *s, uint64 *saved_at);
extern void statefile_cover(UidgenShared *s, uint64 tick);
extern void statefile_refresh(UidgenShared *s);
extern void statefile_check_usable(UidgenShared *s);

#endif							/* UIDGEN_STATEFILE_H */
