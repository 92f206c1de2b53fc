/*-------------------------------------------------------------------------
 *
 * gapless.c
 *	  Block sequences of strategy 'gapless': seq_next() and
 *	  seq_reserve_block() take their numbers with an UPDATE of the
 *	  sequence's row in id_sequences, in the caller's own transaction.
 *
 * A rollback of the caller undoes the UPDATE, so the numbers go back; a
 * commit makes them durable with everything else the transaction wrote.
 * Committed numbers therefore have no gaps and no repeats.  Callers of one
 * sequence queue on its row lock like writers of one row: the lock is held
 * until the caller's transaction ends, lock_timeout, statement_timeout and
 * deadlock detection apply, and under REPEATABLE READ or SERIALIZABLE a
 * caller that waited for another's commit fails with 40001, as any UPDATE
 * of a row updated concurrently does.
 *
 * Neither the allocator nor the seq_next() cache ever serves these
 * sequences (cachetable.c gives them no entry, allocsql.c refuses them),
 * and the skip after a timeline change leaves them alone (failover.c): the
 * row is transactional, so a promoted standby holds exactly the numbers
 * whose commits it received (docs/block-sequences.md, "Gapless numbers").
 *
 * What is durable before what: nothing of its own.  The UPDATE commits or
 * rolls back with the caller's transaction; a crash before that commit
 * takes the numbers back with the rest of the transaction.
 *
 * The UPDATE runs as the table's owner (callers, PUBLIC, may not write
 * id_sequences), schema-qualified, so the caller's search_path plays no
 * part; user id and security context are restored by the transaction
 * machinery if it fails.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "blocks/reservation.h"
#include "blocks/gapless.h"
#include "blocks/outcome.h"
#include "blocks/period.h"
#include "blocks/seqrow.h"

/* How many numbers a call takes: $2, or the row's block size if 0. */
#define GAPLESS_K "CASE WHEN $2 OPERATOR(pg_catalog.>) 0 THEN $2 ELSE t.block_size::pg_catalog.int8 END"

/*
 * The statement that takes k numbers (GAPLESS_K) of the row named $1 if
 * "filter" holds and they fit, increment apart, never past the bound (nor
 * within |increment| of the last bigint: seq_room()); it returns the first
 * and the last count.  table and schema: quoted.
 */
static char *
gapless_update_sql(const char *table, const char *schema, const char *filter)
{
	return psprintf("UPDATE %s AS t SET next_block_start ="
					" (t.next_block_start::pg_catalog.numeric OPERATOR(pg_catalog.+)"
					" ((%s)::pg_catalog.numeric OPERATOR(pg_catalog.*) t.increment))::pg_catalog.int8"
					" WHERE t.name OPERATOR(pg_catalog.=) $1"
					" AND t.strategy OPERATOR(pg_catalog.=) 'gapless' AND %s"
					" AND (%s)::pg_catalog.numeric OPERATOR(pg_catalog.<=)"
					" %s.seq_room(t.next_block_start, t.increment, t.min_value, t.max_value)"
					" RETURNING (t.next_block_start::pg_catalog.numeric OPERATOR(pg_catalog.-)"
					" ((%s)::pg_catalog.numeric OPERATOR(pg_catalog.*) t.increment))::pg_catalog.int8,"
					" t.next_block_start OPERATOR(pg_catalog.-) t.increment",
					table, GAPLESS_K, filter, GAPLESS_K, schema, GAPLESS_K);
}

/*
 * The numbers were not taken: the row is gone, changed strategy, is full,
 * or is numbered per period.  Lock it (waiting, as the UPDATE would have),
 * then raise the error, or take the numbers of the period of the time now,
 * restarting the count (at min_value, beyond reset_skip IDs) if the row's
 * period is earlier; 22008 if it is later (the clock is behind it).
 * Returns the first number, and *last.
 */
static int64
gapless_slow(const char *table, const char *schema, const char *name, int64 n, int64 *last)
{
	Oid			types[3] = {TEXTOID, INT8OID, INT4OID};
	Datum		args[3] = {CStringGetTextDatum(name), Int64GetDatum(n), 0};
	AllocResult res = {.outcome = ALLOC_UNKNOWN};
	bool		isnull;
	bool		no_period;
	HeapTuple	tup;
	TupleDesc	desc;
	int32		period;
	int64		max_value;
	Period		now;

	if (SPI_execute_with_args(psprintf("SELECT t.strategy, t.next_block_start, t.max_value,"
									   " t.block_size, t.increment, t.min_value, t.reset, t.period,"
									   " t.time_zone FROM %s AS t"
									   " WHERE t.name OPERATOR(pg_catalog.=) $1 FOR NO KEY UPDATE", table),
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed on id_sequences");
	if (SPI_processed == 0)
		outcome_raise(name, &res);
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	if (strcmp(TextDatumGetCString(SPI_getbinval(tup, desc, 1, &isnull)), "gapless") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("block sequence \"%s\" was recreated with another strategy", name),
				 errhint("Call the function again.")));
	res.outcome = ALLOC_EXHAUSTED;
	res.requested = n > 0 ? n : DatumGetInt32(SPI_getbinval(tup, desc, 4, &isnull));
	res.next_block_start = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
	res.increment = DatumGetInt64(SPI_getbinval(tup, desc, 5, &isnull));
	res.bound = DatumGetInt64(SPI_getbinval(tup, desc, res.increment > 0 ? 3 : 6, &isnull));
	max_value = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	period = DatumGetInt32(SPI_getbinval(tup, desc, 8, &no_period));
	period_of(TextDatumGetCString(SPI_getbinval(tup, desc, 7, &isnull)),
			  TextDatumGetCString(SPI_getbinval(tup, desc, 9, &isnull)),
			  GetCurrentTimestamp(), &now);
	res.period_now = now.key;
	if (res.period_now == 0)
		outcome_exhausted(name, &res, "numbers");
	if (!no_period && period > res.period_now)
	{
		res.outcome = ALLOC_CLOCK_BEHIND;
		res.period = period;
		outcome_raise(name, &res);
	}
	/* a new period: the count restarts, beyond reset_skip IDs */
	if (no_period || period < res.period_now)
	{
		args[2] = Int32GetDatum(res.period_now);
		if (SPI_execute_with_args(psprintf("UPDATE %s AS t SET next_block_start ="
										   " (t.min_value::pg_catalog.numeric OPERATOR(pg_catalog.+)"
										   " LEAST(t.reset_skip::pg_catalog.numeric,"
										   " %s.seq_room(t.min_value, t.increment, t.min_value, t.max_value))"
										   " OPERATOR(pg_catalog.*) t.increment)::pg_catalog.int8,"
										   " period = $3, reset_skip = 0"
										   " WHERE t.name OPERATOR(pg_catalog.=) $1 RETURNING t.next_block_start",
										   table, schema),
								  3, types, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING ||
			SPI_processed != 1)
			elog(ERROR, "could not restart block sequence \"%s\"", name);
		res.next_block_start = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
														   SPI_tuptable->tupdesc, 1, &isnull));
	}
	args[2] = Int32GetDatum(res.period_now);
	if (SPI_execute_with_args(gapless_update_sql(table, schema, "t.period OPERATOR(pg_catalog.=) $3"),
							  3, types, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "SPI_execute failed on id_sequences");
	res.period = res.period_now;
	if (SPI_processed != 1)
		outcome_exhausted(name, &res, "numbers");
	*last = period_number(res.period_now, max_value,
						  DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)));
	return period_number(res.period_now, max_value,
						 DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)));
}

/* The owner of id_sequences, who may write it. */
static Oid
gapless_owner(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Oid			owner = rel->rd_rel->relowner;

	table_close(rel, AccessShareLock);
	return owner;
}

/*
 * Take n numbers (0: the block size) of a sequence of strategy 'gapless'
 * in the caller's transaction, increment apart: returns the first, and
 * *last.  funcid: the calling function of the extension.
 */
int64
gapless_take(Oid funcid, const char *name, int64 n, int64 *last)
{
	Oid			relid = seqrow_table(funcid);
	char	   *table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												   "id_sequences");
	const char *schema = quote_identifier(get_namespace_name(get_rel_namespace(relid)));
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		args[2] = {CStringGetTextDatum(name), Int64GetDatum(n)};
	Oid			save_userid;
	int			save_sec;
	bool		isnull;
	int64		first = 0;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(gapless_owner(relid),
						   save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(gapless_update_sql(table, schema, "t.reset OPERATOR(pg_catalog.=) 'none'"),
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "SPI_execute failed on id_sequences");
	if (SPI_processed == 1)
	{
		first = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		*last = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	}
	else
		first = gapless_slow(table, schema, name, n, last);
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec);
	return first;
}
