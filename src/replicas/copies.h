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

#include "clock/identity.h"

/* What uidgen_status() shows of copies (copies_describe()). */
typedef struct CopiesView
{
	UidgenIdentity vouched;		/* the server the state file vouches for */
	UidgenCopyReason copy_reason;	/* why this is a copy, or NONE */
	int32		origin_worker;	/* worker id of the server copied from, or -1 */
	uint64		origin_mark;	/* highest mark replayed from its WAL */
	bool		blocks_fenced;	/* block sequences wait for a take-over */
} CopiesView;

extern void copies_register(void);
extern void copies_replay_mark(uint64 mark, int32 worker_id);
extern void copies_guard(void);
extern void copies_end_recovery(void);
extern void copies_refresh(void);
extern bool copies_rebase_pending(void);
extern bool copies_refused(void);
extern void copies_refuse(void);
extern void copies_check_blocks(void);
extern uint64 copies_skip_key(void);
extern void copies_describe(CopiesView *v);

#endif							/* UIDGEN_COPIES_H */
