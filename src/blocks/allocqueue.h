/*-------------------------------------------------------------------------
 *
 * allocqueue.h
 *	  The block allocator's request queue: backends ask, the allocator
 *	  worker of their database answers.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_ALLOCQUEUE_H
#define UIDGEN_ALLOCQUEUE_H

#include "blocks/reservation.h"

extern void allocqueue_register(void);
extern void allocator_reserve(const char *name, int64 n, AllocResult *res);

/* For the allocator worker (allocworker.c) */
extern Oid	allocator_detach(void);
extern bool allocator_retire(Oid dbid, bool (*other_work) (Oid dbid));
extern int	allocator_max_requests(void);
extern int	allocator_take_requests(Oid dbid, AllocWork *works, int max);
extern void allocator_answer(const AllocWork *works, int nworks);

#endif							/* UIDGEN_ALLOCQUEUE_H */
