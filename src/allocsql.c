/*-------------------------------------------------------------------------
 *
 * allocsql.c
 *	  The statements the block allocator runs on id_sequences.
 *
 * First the table lock, taken only if it is free at once: if another
 * session holds or waits for a conflicting lock on id_sequences, every
 * request of the round is reported back with the table, and its caller
 * waits for the lock itself.  Then, per sequence, however many requests a
 * round holds, one UPDATE that locks the row with a SKIP LOCKED subquery and
 * moves it past all of them; if that does not apply (row locked, missing,
 * or out of room), one SELECT ... FOR NO KEY UPDATE SKIP LOCKED and one
 * UPDATE, which also record exhaustion.  FOR NO KEY UPDATE, as no key
 * column changes: foreign-key checks (FOR KEY SHARE) and refills do not
 * block each other.  A row locked by another transaction is reported with
 * its xmax as the tuple header holds it (a transaction or a MultiXactId),
 * so the allocator never waits on a caller's transaction.  The statements
 * are schema-qualified (the worker's search_path holds only pg_catalog),
 * prepared once and kept until a round fails.
 *
 * Everything here runs in the allocator worker, inside the transaction
 * allocworker.c opens and commits.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "allocator.h"
#include "allocsql.h"

/* The extension and its schema; the prepared statements. */
static Oid	plan_ext = InvalidOid;
static Oid	plan_nsp = InvalidOid;
static SPIPlanPtr plan_fast = NULL;
static SPIPlanPtr plan_lock = NULL;
static SPIPlanPtr plan_find = NULL;
static SPIPlanPtr plan_update = NULL;

/* Prepare and keep one statement. */
static SPIPlanPtr
alloc_plan(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	return plan;
}

/* The schema uidgen is installed in. */
static Oid
alloc_extension_schema(Oid ext)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(ext)};
	bool		isnull;

	if (SPI_execute_with_args("SELECT e.extnamespace FROM pg_catalog.pg_extension e"
							  " WHERE e.oid OPERATOR(pg_catalog.=) $1",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not find the schema of extension uidgen");
	return DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull));
}

/* The extension was dropped (or never installed): no id_sequences. */
static void
alloc_not_installed(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("extension \"uidgen\" is not installed in this database")));
}

/*
 * The OID of id_sequences, looked up by name in each round, as the
 * statements are (the plan cache resolves their names again when the table
 * changes): the lock taken on it is the one they use.
 */
static Oid
alloc_table(void)
{
	Oid			relid;

	if (!OidIsValid(plan_ext))
	{
		Oid			ext = get_extension_oid("uidgen", true);

		if (!OidIsValid(ext))
			alloc_not_installed();
		plan_nsp = alloc_extension_schema(ext);
		plan_ext = ext;
	}
	relid = get_relname_relid("id_sequences", plan_nsp);
	if (!OidIsValid(relid))
		alloc_not_installed();
	return relid;
}

/* Forget the statements, so that the next round looks the table up again. */
void
allocsql_forget(void)
{
	if (plan_fast != NULL)
	{
		SPI_freeplan(plan_fast);
		SPI_freeplan(plan_lock);
		SPI_freeplan(plan_find);
		SPI_freeplan(plan_update);
	}
	plan_fast = plan_lock = plan_find = plan_update = NULL;
	plan_ext = plan_nsp = InvalidOid;
}

/*
 * Build the statements on id_sequences, schema-qualified.  They are kept
 * until a round fails; the plan cache replans them if the table changes.
 */
static void
alloc_prepare(void)
{
	Oid			types[3] = {TEXTOID, INT8OID, BOOLOID};
	Oid			fast_types[3] = {TEXTOID, INT8OID, INT8OID};
	char	   *schema;
	char	   *table;

	if (plan_fast != NULL)
		return;
	schema = get_namespace_name(plan_nsp);
	if (schema == NULL)
		alloc_not_installed();
	table = psprintf("%s.id_sequences", quote_identifier(schema));
	/* the whole batch in one statement, when it fits ($2 + $3 blocks) */
	plan_fast = alloc_plan(psprintf("UPDATE %s AS t"
									" SET next_block_start = t.next_block_start + ($2 + $3 * t.block_size)"
									" WHERE t.ctid OPERATOR(pg_catalog.=) (SELECT ctid FROM %s"
									" WHERE name OPERATOR(pg_catalog.=) $1 FOR NO KEY UPDATE SKIP LOCKED)"
									" AND NOT t.exhausted"
									" AND t.next_block_start::pg_catalog.numeric + ($2 + $3 * t.block_size)"
									" <= LEAST(t.max_value, %lld)::pg_catalog.numeric + 1"
									" RETURNING t.next_block_start - ($2 + $3 * t.block_size), t.block_size",
									table, table, (long long) ALLOC_ID_CEILING),
						   3, fast_types);
	plan_lock = alloc_plan(psprintf("SELECT next_block_start, block_size, max_value, exhausted"
									" FROM %s WHERE name OPERATOR(pg_catalog.=) $1"
									" FOR NO KEY UPDATE SKIP LOCKED", table), 1, types);
	plan_find = alloc_plan(psprintf("SELECT ctid FROM %s"
									" WHERE name OPERATOR(pg_catalog.=) $1", table),
						   1, types);
	plan_update = alloc_plan(psprintf("UPDATE %s SET next_block_start = $2, exhausted = $3"
									  " WHERE name OPERATOR(pg_catalog.=) $1", table),
							 3, types);
}

/*
 * The common case: the whole group fits.  One statement locks the row,
 * checks and moves it; false (and nothing changed) if it does not apply.
 */
static bool
alloc_serve_fast(AllocWork *works, int count, Datum name)
{
	Datum		args[3];
	int64		explicit_ids = 0;
	int64		blocks = 0;
	int64		next;
	int32		block_size;
	bool		isnull;

	for (int i = 0; i < count; i++)
	{
		explicit_ids += works[i].n;
		blocks += works[i].n > 0 ? 0 : 1;
	}
	args[0] = name;
	args[1] = Int64GetDatum(explicit_ids);
	args[2] = Int64GetDatum(blocks);
	if (SPI_execute_plan(plan_fast, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "SPI_execute_plan failed on id_sequences");
	if (SPI_processed != 1)
		return false;
	next = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	block_size = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	for (int i = 0; i < count; i++)
	{
		AllocResult *r = &works[i].result;
		int64		n = works[i].n > 0 ? works[i].n : block_size;

		r->outcome = ALLOC_OK;
		r->requested = n;
		r->first = next;
		r->last = next + (n - 1);
		next = r->last + 1;
	}
	return true;
}

/* IDs left from next up to max_value (and below PG_INT64_MAX). */
static uint64
alloc_room(int64 next, int64 max_value)
{
	int64		ceiling = Min(max_value, ALLOC_ID_CEILING);

	if (next > ceiling)
		return 0;
	return (uint64) ceiling - (uint64) next + 1;
}

/*
 * Who holds a row locked: the xmax of the tuple at tid and whether it is a
 * MultiXactId (several lockers), as the tuple header says; SQL's xmax
 * column cannot tell a MultiXactId from a transaction.  The table's lock is
 * held.  Left invalid if the row was unlocked meanwhile.
 */
static void
alloc_row_locker(Oid relid, ItemPointer tid, AllocResult *r)
{
	Relation	rel = table_open(relid, NoLock);
	Buffer		buf = ReadBuffer(rel, ItemPointerGetBlockNumber(tid));
	Page		page;
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (off <= PageGetMaxOffsetNumber(page) &&
		ItemIdIsNormal(PageGetItemId(page, off)))
	{
		HeapTupleHeader htup = (HeapTupleHeader) PageGetItem(page, PageGetItemId(page, off));
		uint16		infomask = htup->t_infomask;

		/* a lock from before 9.3, kept by pg_upgrade, locks nothing */
		if (!(infomask & HEAP_XMAX_INVALID) && !HEAP_LOCKED_UPGRADED(infomask))
		{
			r->locker = HeapTupleHeaderGetRawXmax(htup);
			r->locker_is_multi = (infomask & HEAP_XMAX_IS_MULTI) != 0;
			r->locker_lock_only = HEAP_XMAX_IS_LOCKED_ONLY(infomask);
		}
	}
	UnlockReleaseBuffer(buf);
	table_close(rel, NoLock);
}

/* Fill in the outcome of every request of a sequence without a lockable row. */
static void
alloc_group_missing(Oid relid, AllocWork *works, int count, Datum *args)
{
	AllocResult found;

	memset(&found, 0, sizeof(found));
	found.outcome = ALLOC_UNKNOWN;
	if (SPI_execute_plan(plan_find, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_plan failed on id_sequences");
	if (SPI_processed > 0)
	{
		bool		isnull;
		ItemPointerData tid;

		tid = *(ItemPointer) DatumGetPointer(SPI_getbinval(SPI_tuptable->vals[0],
														   SPI_tuptable->tupdesc, 1, &isnull));
		found.outcome = ALLOC_LOCKED;
		alloc_row_locker(relid, &tid, &found);
	}
	for (int i = 0; i < count; i++)
		works[i].result = found;
}

/* Serve every request of one sequence with one row lock and one update. */
static void
alloc_serve_group(Oid relid, AllocWork *works, int count)
{
	Datum		args[3];
	bool		isnull;
	int64		next;
	int64		max_value;
	int32		block_size;
	bool		exhausted;
	bool		changed = false;
	HeapTuple	tup;
	TupleDesc	desc;

	args[0] = CStringGetTextDatum(works[0].name);
	if (alloc_serve_fast(works, count, args[0]))
		return;
	if (SPI_execute_plan(plan_lock, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_plan failed on id_sequences");
	if (SPI_processed == 0)
	{
		alloc_group_missing(relid, works, count, args);
		return;
	}
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	next = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	block_size = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
	max_value = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	exhausted = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));

	for (int i = 0; i < count; i++)
	{
		AllocResult *r = &works[i].result;
		int64		n = works[i].n > 0 ? works[i].n : block_size;

		r->requested = n;
		if (!exhausted && alloc_room(next, max_value) >= (uint64) n)
		{
			r->outcome = ALLOC_OK;
			r->first = next;
			r->last = next + (n - 1);
			next = r->last + 1;
			changed = true;
			continue;
		}
		changed |= !exhausted;
		exhausted = true;
		r->outcome = ALLOC_EXHAUSTED;
		r->next_block_start = next;
		r->max_value = max_value;
	}
	if (!changed)
		return;
	args[1] = Int64GetDatum(next);
	args[2] = BoolGetDatum(exhausted);
	if (SPI_execute_plan(plan_update, args, NULL, false, 0) != SPI_OK_UPDATE ||
		SPI_processed != 1)
		elog(ERROR, "could not update block sequence \"%s\"", works[0].name);
}

/*
 * Serve every request, in the caller's transaction; the works are sorted by
 * sequence name.  If the table's lock is not free at once, every request is
 * answered ALLOC_LOCKED with the table.  Errors propagate.
 */
void
allocsql_serve_all(AllocWork *works, int nworks)
{
	Oid			relid = alloc_table();
	int			start = 0;

	for (int i = 0; i < nworks; i++)
		memset(&works[i].result, 0, sizeof(AllocResult));
	/* the lock the UPDATEs take; never queue behind a caller for it */
	if (!ConditionalLockRelationOid(relid, RowExclusiveLock))
	{
		for (int i = 0; i < nworks; i++)
		{
			works[i].result.outcome = ALLOC_LOCKED;
			works[i].result.locked_table = relid;
		}
		return;
	}
	alloc_prepare();
	while (start < nworks)
	{
		int			end = start + 1;

		while (end < nworks && strcmp(works[end].name, works[start].name) == 0)
			end++;
		alloc_serve_group(relid, works + start, end - start);
		start = end;
	}
}
