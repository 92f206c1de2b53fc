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
 * so the allocator never waits on a caller's transaction.
 *
 * A sequence of strategy 'gapless' is never served here (gapless.c): a
 * request that finds one (recreated since its caller looked) fails.
 *
 * A refill of the cache (blockcache.c) takes up to n IDs: what is left
 * below max_value if less, 2200H if none.  Answers carry the row's block
 * size, strategy and increment, for the cache.
 *
 * Steps and direction: a row hands out next_block_start, then the values
 * increment apart (negative: counting down to min_value), as many as
 * seq_room() of the install script counts, so that next_block_start, the
 * value after the last one handed out, is always a bigint.  The arithmetic
 * on the row is in numeric; a row of 0.2.0's table (before ALTER EXTENSION
 * UPDATE) counts up by one.
 *
 * A sequence of strategy 'sequence' keeps its position in a native sequence
 * instead of next_block_start: with its row locked as above, allocseq.c
 * serves its blocks, and exhaustion is recorded in the row here.
 *
 * Numbering per period (id_sequences.reset, period.c): such a row takes the
 * slow path; if the period of the time now is later than the row's, the
 * same UPDATE restarts the count (at min_value, beyond reset_skip IDs) and
 * records the period; if it is earlier, every request is answered 22008
 * and nothing changes.  Answers carry the numbers (the period's key, then
 * the count) and the period's bounds, for the cache.
 *
 * The statements are schema-qualified (the worker's search_path holds only
 * pg_catalog), prepared once and kept until a round fails.
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
#include "utils/timestamp.h"

#include "blocks/reservation.h"
#include "blocks/allocseq.h"
#include "blocks/allocsql.h"
#include "blocks/period.h"
#include "core/crashpoint.h"

/* The extension and its schema; the prepared statements. */
static Oid	plan_ext = InvalidOid;
static Oid	plan_nsp = InvalidOid;
static SPIPlanPtr plan_fast = NULL;
static SPIPlanPtr plan_lock = NULL;
static SPIPlanPtr plan_find = NULL;
static SPIPlanPtr plan_update = NULL;
static SPIPlanPtr plan_period_update = NULL;
/* The statements know id_sequences.strategy (0.2.0; 0.1.0 lacks it). */
static bool plan_strategy = false;
/* And id_sequences.increment (0.3.0; 0.2.0 lacks it), and reset. */
static bool plan_step = false;
static bool plan_reset = false;

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
 * changes): the lock taken on it is the one they use.  Also for failover.c.
 */
Oid
allocsql_table(void)
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

/* Free the prepared statements. */
static void
alloc_free_plans(void)
{
	if (plan_fast != NULL)
	{
		SPI_freeplan(plan_fast);
		SPI_freeplan(plan_lock);
		SPI_freeplan(plan_find);
		SPI_freeplan(plan_update);
		if (plan_period_update != NULL)
			SPI_freeplan(plan_period_update);
	}
	plan_fast = plan_lock = plan_find = plan_update = plan_period_update = NULL;
	allocseq_forget();
}

/* Forget the statements, so that the next round looks the table up again. */
void
allocsql_forget(void)
{
	alloc_free_plans();
	plan_ext = plan_nsp = InvalidOid;
}

/*
 * Build the statements on id_sequences, schema-qualified.  They are kept
 * until a round fails; the plan cache replans them if the table changes.
 * Until ALTER EXTENSION uidgen UPDATE adds column strategy (0.1.0's
 * table), every sequence is of strategy 'table', and until it adds column
 * increment (0.2.0's), every sequence counts up by one; the statements are
 * built again when a column appears, with the table's lock held.
 */
static void
alloc_prepare(Oid relid)
{
	bool		has_strategy = get_attnum(relid, "strategy") != InvalidAttrNumber;
	bool		has_step = get_attnum(relid, "increment") != InvalidAttrNumber;
	bool		has_reset = get_attnum(relid, "reset") != InvalidAttrNumber;
	const char *table_only;
	char	   *inc;
	char	   *room;
	char	   *count;
	const char *strategy_cols;
	Oid			types[3] = {TEXTOID, INT8OID, BOOLOID};
	Oid			fast_types[3] = {TEXTOID, INT8OID, INT8OID};
	Oid			period_types[4] = {TEXTOID, INT8OID, BOOLOID, INT4OID};
	char	   *schema;
	char	   *table;

	if (plan_fast != NULL && plan_strategy == has_strategy && plan_step == has_step &&
		plan_reset == has_reset)
		return;
	alloc_free_plans();
	plan_strategy = has_strategy;
	plan_step = has_step;
	plan_reset = has_reset;
	/* (numbered per period: the slow path, which restarts the count) */
	table_only = has_reset ? " AND strategy OPERATOR(pg_catalog.=) 'table'"
		" AND reset OPERATOR(pg_catalog.=) 'none'" :
		has_strategy ? " AND strategy OPERATOR(pg_catalog.=) 'table'" : "";
	strategy_cols = has_strategy ?
		"t.strategy OPERATOR(pg_catalog.=) 'sequence', t.sequence::pg_catalog.oid,"
		" t.strategy OPERATOR(pg_catalog.=) 'gapless'" :
		"false, NULL::pg_catalog.oid, false";
	schema = get_namespace_name(plan_nsp);
	if (schema == NULL)
		alloc_not_installed();
	table = psprintf("%s.id_sequences", quote_identifier(schema));
	allocsql_step_sql(relid, quote_identifier(schema), &inc, &room);
	/* strategy 'table': the whole batch in one statement, when it fits */
	count = "($2 + $3 * t.block_size)";
	plan_fast = allocseq_keep_plan(psprintf("UPDATE %s AS t"
									" SET next_block_start = (t.next_block_start::pg_catalog.numeric"
									" + %s::pg_catalog.numeric * %s)::pg_catalog.int8"
									" WHERE t.ctid OPERATOR(pg_catalog.=) (SELECT ctid FROM %s"
									" WHERE name OPERATOR(pg_catalog.=) $1%s"
									" FOR NO KEY UPDATE SKIP LOCKED)"
									" AND NOT t.exhausted AND %s <= %s"
									" RETURNING (t.next_block_start::pg_catalog.numeric"
									" - %s::pg_catalog.numeric * %s)::pg_catalog.int8, t.block_size, %s",
									table, count, inc, table, table_only, count, room,
									count, inc, inc),
						   3, fast_types);
	plan_lock = allocseq_keep_plan(psprintf("SELECT t.next_block_start, t.block_size, t.max_value, t.exhausted, %s,"
									" %s, %s, %s FROM %s AS t WHERE t.name OPERATOR(pg_catalog.=) $1"
									" FOR NO KEY UPDATE SKIP LOCKED", strategy_cols, inc,
									has_step ? "t.min_value" : "(-9223372036854775807 - 1)::pg_catalog.int8",
									has_reset ? "t.reset, t.period, t.time_zone, t.reset_skip" :
									"'none'::pg_catalog.text, NULL::pg_catalog.int4, 'UTC'::pg_catalog.text,"
									" 0::pg_catalog.int8",
									table), 1, types);
	plan_find = allocseq_keep_plan(psprintf("SELECT ctid FROM %s"
									" WHERE name OPERATOR(pg_catalog.=) $1", table),
						   1, types);
	plan_update = allocseq_keep_plan(psprintf("UPDATE %s SET next_block_start = $2, exhausted = $3"
									  " WHERE name OPERATOR(pg_catalog.=) $1", table),
							 3, types);
	if (has_reset)
		/* (reset_skip is used up by a restart: a new period) */
		plan_period_update = allocseq_keep_plan(psprintf("UPDATE %s SET next_block_start = $2, exhausted = $3,"
												 " period = $4, reset_skip = CASE WHEN period"
												 " OPERATOR(pg_catalog.=) $4 THEN reset_skip ELSE 0 END"
												 " WHERE name OPERATOR(pg_catalog.=) $1", table),
										4, period_types);
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
	int64		increment;
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
	increment = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	for (int i = 0; i < count; i++)
	{
		AllocResult *r = &works[i].result;
		int64		n = works[i].n > 0 ? works[i].n : block_size;

		r->outcome = ALLOC_OK;
		r->requested = n;
		r->block_size = block_size;
		r->increment = increment;
		r->is_table = true;
		r->first = next;
		r->last = next + (n - 1) * increment;
		next = r->last + increment;
	}
	return true;
}

/*
 * The increment of a row of id_sequences aliased t, and the IDs it has left
 * (seq_room()), as SQL: 0.2.0's table (before ALTER EXTENSION UPDATE) counts
 * up by one to max_value.  schema: the extension's, quoted.  Also for
 * failover.c.
 */
void
allocsql_step_sql(Oid relid, const char *schema, char **increment, char **room)
{
	if (get_attnum(relid, "increment") != InvalidAttrNumber)
	{
		*increment = pstrdup("t.increment");
		*room = psprintf("%s.seq_room(t.next_block_start, t.increment, t.min_value, t.max_value)",
						 schema);
		return;
	}
	*increment = pstrdup("1::pg_catalog.int8");
	*room = psprintf("GREATEST(LEAST(t.max_value, %lld)::pg_catalog.numeric"
					 " - t.next_block_start + 1, 0)", (long long) (PG_INT64_MAX - 1));
}

/*
 * Who holds a row locked: the xmax of the tuple at tid and whether it is a
 * MultiXactId (several lockers), as the tuple header says; SQL's xmax
 * column cannot tell a MultiXactId from a transaction.  The table's lock is
 * held.  Left invalid if the row was unlocked meanwhile.  Also for
 * failover.c.
 */
void
allocsql_row_locker(Oid relid, ItemPointer tid, AllocResult *r)
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
		allocsql_row_locker(relid, &tid, &found);
	}
	for (int i = 0; i < count; i++)
		works[i].result = found;
}

/*
 * For a row numbered per period (columns 10 to 13 of plan_lock: reset,
 * period, time_zone, reset_skip): *p, the period of the time now, and the
 * count restarted at min_value (beyond reset_skip IDs, exhaustion cleared)
 * if the row's period is earlier: 1 then, else 0 (p->key 0 for reset
 * 'none').  -1, every request answered, if the row's period is later (the
 * clock is behind it).  The row is locked.
 */
static int
alloc_period(AllocWork *works, int count, HeapTuple tup, TupleDesc desc,
			 int64 increment, int64 min_value, int64 max_value,
			 int64 *next, bool *exhausted, Period *p)
{
	bool		isnull;
	bool		no_period;
	char	   *reset = TextDatumGetCString(SPI_getbinval(tup, desc, 10, &isnull));
	int32		period = DatumGetInt32(SPI_getbinval(tup, desc, 11, &no_period));
	char	   *tz = TextDatumGetCString(SPI_getbinval(tup, desc, 12, &isnull));
	uint64		skip = (uint64) DatumGetInt64(SPI_getbinval(tup, desc, 13, &isnull));
	uint64		room;

	period_of(reset, tz, GetCurrentTimestamp(), p);
	if (p->key == 0 || (!no_period && period == p->key))
		return 0;
	if (!no_period && period > p->key)
	{
		for (int i = 0; i < count; i++)
		{
			works[i].result.outcome = ALLOC_CLOCK_BEHIND;
			works[i].result.period = period;
			works[i].result.period_now = p->key;
		}
		return -1;
	}
	/* (within the room, so a bigint: seq_room()) */
	room = reservation_room(min_value, increment, min_value, max_value);
	*next = min_value + (int64) Min(skip, room) * increment;
	*exhausted = skip >= room;
	return 1;
}

/* Serve every request of one sequence with one row lock and one update. */
static void
alloc_serve_group(Oid relid, AllocWork *works, int count)
{
	Datum		args[4];
	bool		isnull;
	int64		next;
	int64		max_value;
	int64		min_value;
	int64		increment;
	int32		block_size;
	bool		exhausted;
	bool		changed = false;
	int			restarted;
	Period		period;
	HeapTuple	tup;
	TupleDesc	desc;

	args[0] = CStringGetTextDatum(works[0].name);
	if (alloc_serve_fast(works, count, args[0]))
		return;
	/* (a row locked then, or changed since the statement's snapshot) */
	CRASH_POINT("alloc-after-fast-miss");
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
	increment = DatumGetInt64(SPI_getbinval(tup, desc, 8, &isnull));
	min_value = DatumGetInt64(SPI_getbinval(tup, desc, 9, &isnull));
	/* (recreated as 'gapless' since its caller looked: never served here) */
	if (DatumGetBool(SPI_getbinval(tup, desc, 7, &isnull)))
	{
		for (int i = 0; i < count; i++)
			reservation_fail(&works[i].result, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
							"it is of strategy \"gapless\", whose numbers are taken in the caller's transaction");
		return;
	}
	if (DatumGetBool(SPI_getbinval(tup, desc, 5, &isnull)))
	{
		Oid			seqoid = DatumGetObjectId(SPI_getbinval(tup, desc, 6, &isnull));

		if (!allocseq_serve(works, count, seqoid, next, block_size, increment,
							min_value, max_value, exhausted))
			return;
		/* exhaustion recorded in the row; its position is the native sequence's */
		args[1] = Int64GetDatum(next);
		args[2] = BoolGetDatum(true);
		if (SPI_execute_plan(plan_update, args, NULL, false, 0) != SPI_OK_UPDATE ||
			SPI_processed != 1)
			elog(ERROR, "could not update block sequence \"%s\"", works[0].name);
		return;
	}
	restarted = alloc_period(works, count, tup, desc, increment, min_value, max_value,
							 &next, &exhausted, &period);
	if (restarted < 0)
		return;
	changed = restarted > 0;

	for (int i = 0; i < count; i++)
	{
		AllocResult *r = &works[i].result;
		int64		n = works[i].n > 0 ? works[i].n : block_size;
		uint64		room = exhausted ? 0 : reservation_room(next, increment, min_value, max_value);

		/*
		 * a refill of the cache takes what is left, if it is short (room
		 * may exceed PG_INT64_MAX counting by one: compared unsigned)
		 */
		n = works[i].for_cache && room > 0 && room < (uint64) n ? (int64) room : n;
		r->requested = n;
		r->block_size = block_size;
		r->increment = increment;
		r->is_table = true;
		if (room >= (uint64) n)
		{
			r->outcome = ALLOC_OK;
			r->first = next;
			r->last = next + (n - 1) * increment;
			next = r->last + increment;
			changed = true;
			/* numbered per period: the period's key, then the count */
			if (period.key != 0)
			{
				r->first = period_number(period.key, max_value, r->first);
				r->last = period_number(period.key, max_value, r->last);
				r->period = period.key;
				r->period_start = period.start;
				r->period_end = period.end;
			}
			continue;
		}
		changed |= !exhausted;
		exhausted = true;
		r->outcome = ALLOC_EXHAUSTED;
		r->next_block_start = next;
		r->bound = increment > 0 ? max_value : min_value;
		r->period = period.key;
	}
	if (!changed)
		return;
	args[1] = Int64GetDatum(next);
	args[2] = BoolGetDatum(exhausted);
	args[3] = Int32GetDatum(period.key);
	if (SPI_execute_plan(period.key != 0 ? plan_period_update : plan_update, args, NULL,
						 false, 0) != SPI_OK_UPDATE || SPI_processed != 1)
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
	Oid			relid = allocsql_table();
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
	alloc_prepare(relid);
	while (start < nworks)
	{
		int			end = start + 1;

		while (end < nworks && strcmp(works[end].name, works[start].name) == 0)
			end++;
		alloc_serve_group(relid, works + start, end - start);
		start = end;
	}
}
