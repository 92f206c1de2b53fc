/*-------------------------------------------------------------------------
 *
 * seqrow.h
 *	  Does a block sequence exist?  Checked by the calling backend before
 *	  it asks the allocator or the seq_next() cache for anything.  And
 *	  what strategy a row of id_sequences has, for its triggers.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_SEQROW_H
#define UIDGEN_SEQROW_H

#include "access/htup.h"
#include "access/tupdesc.h"

/* A sequence's strategy (column id_sequences.strategy). */
typedef enum SeqStrategy
{
	SEQ_TABLE,
	SEQ_SEQUENCE,
	SEQ_GAPLESS
} SeqStrategy;

extern Oid	seqrow_table(Oid funcid);
extern SeqStrategy seqrow_require(Oid funcid, const char *name);
extern bool seqrow_is_gapless(HeapTuple tuple, TupleDesc desc);

#endif							/* UIDGEN_SEQROW_H */
