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

#include "blocks/reservation.h"
#include "blocks/gapless.h"
#include "blocks/outcome.h"
#include "blocks/seqrow.h"

/* How many numbers a call takes: $2, or the row's block size if 0. */
#define GAPLESS_K "CASE WHEN $2 OPERATOR(pg_catalog.>) 0 THEN $2 ELSE t.block_size::pg_catalog.int8 END"

/* Why nothing was taken: the row is gone, or changed strategy, or is full. */
static void
gapless_refused(const char *table, const char *name, int64 n)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(name)};
	AllocResult res = {.outcome = ALLOC_UNKNOWN};
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	desc;

	if (SPI_execute_with_args(psprintf("SELECT t.strategy, t.next_block_start, t.max_value,"
									   " t.block_size, t.increment, t.min_value FROM %s AS t"
									   " WHERE t.name OPERATOR(pg_catalog.=) $1", table),
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
	outcome_exhausted(name, &res, "numbers");
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
	/*
	 * k: the numbers taken, increment apart; never past the bound (nor
	 * within |increment| of the last bigint: seq_room())
	 */
	if (SPI_execute_with_args(psprintf("UPDATE %s AS t SET next_block_start ="
									   " (t.next_block_start::pg_catalog.numeric OPERATOR(pg_catalog.+)"
									   " ((%s)::pg_catalog.numeric OPERATOR(pg_catalog.*) t.increment))::pg_catalog.int8"
									   " WHERE t.name OPERATOR(pg_catalog.=) $1"
									   " AND t.strategy OPERATOR(pg_catalog.=) 'gapless'"
									   " AND (%s)::pg_catalog.numeric OPERATOR(pg_catalog.<=)"
									   " %s.seq_room(t.next_block_start, t.increment, t.min_value, t.max_value)"
									   " RETURNING (t.next_block_start::pg_catalog.numeric OPERATOR(pg_catalog.-)"
									   " ((%s)::pg_catalog.numeric OPERATOR(pg_catalog.*) t.increment))::pg_catalog.int8,"
									   " t.next_block_start OPERATOR(pg_catalog.-) t.increment",
									   table, GAPLESS_K, GAPLESS_K,
									   quote_identifier(get_namespace_name(get_rel_namespace(relid))),
									   GAPLESS_K),
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "SPI_execute failed on id_sequences");
	if (SPI_processed != 1)
		gapless_refused(table, name, n);
	first = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	*last = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec);
	return first;
}
