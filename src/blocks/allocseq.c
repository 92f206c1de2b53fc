/*-------------------------------------------------------------------------
 *
 * allocseq.c
 *	  The blocks of strategy 'sequence', for the block allocator: a native
 *	  sequence per block sequence (INCREMENT BY its block size times its
 *	  increment), one nextval() per block.
 *
 * With the sequence's row locked by allocsql.c (which keeps seq_advance(),
 * seq_alter() and seq_drop() out), each block is one nextval(), after a
 * check against max_value (counting down: min_value); allocsql.c records
 * exhaustion in the row.  A cache refill is one block.
 *
 * What is durable before what (crash point in quotes), inside the
 * allocator's round (allocworker.c has the order of a round):
 *	1. the nextval()s (their WAL records: nextval() logs 32 ahead, and a
 *	   transaction that wrote no WAL of its own commits without flushing
 *	   anything)  "alloc-before-sequence-flush"
 *	2. the WAL flushed up to the native sequence's last record
 *	3. the round's commit, then the blocks handed out
 * A crash before 2 loses nothing handed out: the blocks are not answered
 * before the commit.
 *
 * The statements are schema-qualified (the worker's search_path holds only
 * pg_catalog), prepared once and kept until a round fails
 * (allocseq_forget()); allocseq_keep_plan() keeps allocsql.c's too.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/spi.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "blocks/allocseq.h"
#include "core/crashpoint.h"

/* The prepared statements: where the native sequence is, and its blocks. */
static SPIPlanPtr plan_seqpos = NULL;
static SPIPlanPtr plan_nextval = NULL;

/*
 * Prepare and keep one statement (SPI_keepplan), for the statements here
 * and allocsql.c's, which run round after round.
 */
SPIPlanPtr
allocseq_keep_plan(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	return plan;
}

/* Prepare the statements, once. */
static void
allocseq_prepare(void)
{
	Oid			seq_types[2] = {REGCLASSOID, INT4OID};

	if (plan_seqpos != NULL)
		return;
	plan_seqpos = allocseq_keep_plan("SELECT s.seqincrement,"
							   " pg_catalog.pg_sequence_last_value(s.seqrelid)"
							   " FROM pg_catalog.pg_sequence s"
							   " WHERE s.seqrelid OPERATOR(pg_catalog.=) $1", 1, seq_types);
	plan_nextval = allocseq_keep_plan("SELECT pg_catalog.nextval($1)"
								" FROM pg_catalog.generate_series(1, $2)", 2, seq_types);
}

/* Free the statements (a round failed). */
void
allocseq_forget(void)
{
	if (plan_seqpos != NULL)
	{
		SPI_freeplan(plan_seqpos);
		SPI_freeplan(plan_nextval);
	}
	plan_seqpos = plan_nextval = NULL;
}

/*
 * Flush the WAL up to the native sequence's last record: a nextval() that
 * did not log relies on an earlier record, and a transaction that wrote no
 * WAL of its own commits without flushing anything.
 */
static void
allocseq_flush(Oid seqoid)
{
	Relation	rel = relation_open(seqoid, AccessShareLock);
	Buffer		buf = ReadBuffer(rel, 0);
	XLogRecPtr	lsn;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	lsn = PageGetLSN(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	relation_close(rel, AccessShareLock);
	XLogFlush(lsn);
}

/*
 * The first ID of the native sequence's next nextval(), or PG_INT64_MAX
 * (counting down: PG_INT64_MIN) if there is none; false (the requests
 * failed) if the sequence is gone or its increment is not the block size
 * times the row's increment.  Before its first nextval() since
 * a setval(..., false) (seq_create(), seq_advance(), the skip after a
 * timeline change), the row's next_block_start holds that position, as in
 * seq_next_unused().
 */
static bool
allocseq_next(AllocWork *works, int count, Oid seqoid, int32 block_size,
					int64 step, int64 row_next, int64 *next)
{
	Datum		args[1] = {ObjectIdGetDatum(seqoid)};
	const char *problem = NULL;
	bool		isnull;
	int64		increment;
	int64		last;

	if (SPI_execute_plan(plan_seqpos, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_plan failed on pg_sequence");
	if (SPI_processed != 1)
		problem = "its native sequence does not exist";
	else
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		increment = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		*next = row_next;
		last = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
		/* (|block_size * step| <= 10^18: no overflow) */
		if (increment != block_size * step)
			problem = "the increment of its native sequence is not its block size times its increment";
		else if (!isnull && pg_add_s64_overflow(last, increment, next))
			*next = increment > 0 ? PG_INT64_MAX : PG_INT64_MIN;
	}
	if (problem == NULL)
		return true;
	for (int i = 0; i < count; i++)
		reservation_fail(&works[i].result, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
						problem);
	return false;
}

/*
 * Serve the requests of a sequence of strategy 'sequence', whose row is
 * locked: each one block (n = block_size, or 22023), one nextval() each,
 * checked against max_value (counting down: min_value) first.  The block's
 * IDs are step apart.  True if the row must now be marked exhausted (the
 * caller's UPDATE).
 */
bool
allocseq_serve(AllocWork *works, int count, Oid seqoid, int64 row_next, int32 block_size,
			   int64 step, int64 min_value, int64 max_value, bool exhausted)
{
	Datum		seqargs[2];
	bool		isnull;
	int64		next;
	int			blocks = 0;
	int			row = 0;
	bool		changed = false;

	allocseq_prepare();
	if (!allocseq_next(works, count, seqoid, block_size, step, row_next, &next))
		return false;
	for (int i = 0; i < count; i++)
	{
		AllocResult *r = &works[i].result;
		int64		n = works[i].n > 0 && !works[i].for_cache ? works[i].n : block_size;

		r->requested = n;
		r->block_size = block_size;
		r->increment = step;
		if (n != block_size)
			reservation_fail(r, ERRCODE_INVALID_PARAMETER_VALUE,
							psprintf("strategy \"sequence\" hands out whole blocks of %d IDs only",
									 block_size));
		else if (!exhausted &&
				 reservation_room(next, step, min_value, max_value) >= (uint64) n)
		{
			r->outcome = ALLOC_OK;
			/* (a bigint: the room leaves |step| values after the last ID) */
			next += n * step;
			blocks++;
		}
		else
		{
			changed |= !exhausted;
			exhausted = true;
			r->outcome = ALLOC_EXHAUSTED;
			r->next_block_start = next;
			r->bound = step > 0 ? max_value : min_value;
		}
	}
	if (blocks > 0)
	{
		seqargs[0] = ObjectIdGetDatum(seqoid);
		seqargs[1] = Int32GetDatum(blocks);
		if (SPI_execute_plan(plan_nextval, seqargs, NULL, false, 0) != SPI_OK_SELECT ||
			SPI_processed != (uint64) blocks)
			elog(ERROR, "could not advance the native sequence of block sequence \"%s\"",
				 works[0].name);
		for (int i = 0; i < count; i++)
		{
			AllocResult *r = &works[i].result;
			int64		first;

			if (r->outcome != ALLOC_OK)
				continue;
			first = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[row++],
												SPI_tuptable->tupdesc, 1, &isnull));
			/* moved by hand since allocseq_next(): check again */
			if (reservation_room(first, step, min_value, max_value) < (uint64) block_size)
			{
				changed |= !exhausted;
				exhausted = true;
				r->outcome = ALLOC_EXHAUSTED;
				r->next_block_start = first;
				r->bound = step > 0 ? max_value : min_value;
				continue;
			}
			r->first = first;
			r->last = first + (block_size - 1) * step;
		}
		/* durable before the commit hands the blocks out */
		CRASH_POINT("alloc-before-sequence-flush");
		allocseq_flush(seqoid);
	}
	return changed;
}
