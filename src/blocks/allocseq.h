/*-------------------------------------------------------------------------
 *
 * allocseq.h
 *	  The blocks of strategy 'sequence', for the block allocator.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_ALLOCSEQ_H
#define UIDGEN_ALLOCSEQ_H

#include "executor/spi.h"

#include "blocks/reservation.h"

extern bool allocseq_serve(AllocWork *works, int count, Oid seqoid, int64 row_next,
						   int32 block_size, int64 step, int64 min_value,
						   int64 max_value, bool exhausted);
extern void allocseq_forget(void);
extern SPIPlanPtr allocseq_keep_plan(const char *sql, int nargs, Oid *argtypes);

#endif							/* UIDGEN_ALLOCSEQ_H */
