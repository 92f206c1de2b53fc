/*-------------------------------------------------------------------------
 *
 * copies.h
 *	  What a copy of a data directory may generate, and the end of recovery.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_COPIES_H
#define UIDGEN_COPIES_H

#include "core/shmem.h"

extern void copies_start(UidgenShared *s);
extern void copies_end_recovery(UidgenShared *s);
extern void copies_refresh(UidgenShared *s);
extern void copies_refuse(UidgenShared *s);
extern void copies_check_blocks(void);
extern uint64 copies_skip_key(void);

/* Before a generator runs: settle the end of recovery if it is pending. */
static inline void
copies_guard(UidgenShared *s)
{
	if (unlikely(s->rebase_pending))
		copies_end_recovery(s);
}

#endif							/* UIDGEN_COPIES_H */
