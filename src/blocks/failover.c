/*-------------------------------------------------------------------------
 *
 * failover.c
 *	  Block sequences across a timeline change: before the allocator of a
 *	  database serves the first block on a new timeline, every sequence
 *	  skips ahead by uidgen.promotion_skip values.
 *
 * A standby replays the allocator's commits as they reach it.  With
 * asynchronous replication a failover loses the old primary's last
 * commits, whose blocks clients may have received: without more, the new
 * primary would hand them out again.  Promotion and the end of a
 * point-in-time recovery start a new timeline, so once per database and
 * timeline, in the allocator round's own transaction and before any block
 * of it is served, every row of id_sequences moves uidgen.promotion_skip
 * IDs ahead, skip times its increment (strategy 'table': next_block_start,
 * in the row's direction; 'sequence': its native sequence, by setval(...,
 * false), in the row's direction too, and next_block_start with it, as
 * seq_advance() does), never past the value after its last ID (a sequence
 * left without room is marked exhausted), and the one row of id_sequences_timeline
 * records the timeline.  Both commit with the round: a crash before the
 * commit skips again (a gap), never not at all.  The skip is made whenever
 * the recorded timeline differs from the current one (a pg_upgrade starts
 * the new cluster on timeline 1 again).  uidgen_take_over() on a copy that
 * stays on its timeline (a clone, a copied directory) counts as a change
 * too: the key compared and recorded is the timeline plus 2^32 times a
 * random nonce drawn at each take-over (copies_skip_key()), which is the
 * timeline alone on a server never taken over.
 *
 * What is durable before what (crash points in quotes), all in the round's
 * transaction (allocworker.c):
 *	1. the rows of id_sequences skipped ahead (setval() of native
 *	   sequences, not transactional, is logged: at worst a larger gap)
 *	   "skip-after-update"
 *	2. the key recorded in id_sequences_timeline  "skip-after-record"
 *	3. the round's blocks, then the commit  "skip-after-commit"
 *	4. failover_verified set, in memory: later rounds skip no more
 * A crash before 3 leaves the old key recorded: the next round skips again.
 *
 * The allocator keeps the timeline it last saw committed in a static and
 * compares it with the server's insert timeline at the start of each
 * round, so the table is read once per allocator process.  Like the round,
 * the skip never waits for a caller: if a table's lock is not free at
 * once, or another transaction holds a row, every request of the round is
 * answered with that lock, which its caller waits for (outcome.c), and the
 * next round tries again.
 *
 * Sequences of strategy 'gapless' do not skip (nor are they locked): their
 * row is moved in the callers' transactions, so the promoted server holds
 * exactly the numbers whose commits reached it (gapless.c).
 *
 * The seq_next() cache cannot hold a block from before the timeline
 * change: shared memory starts empty with the server, a standby reserves
 * nothing, and a server changes timeline only at the end of its recovery.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "common/int.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "blocks/allocsql.h"
#include "replicas/copies.h"
#include "core/crashpoint.h"
#include "core/settings.h"
#include "blocks/failover.h"

#define FAILOVER_TABLE "id_sequences_timeline"


/* The key whose skip this database is known to have committed (0: none). */
static uint64 failover_verified = 0;
/* The key the open round's transaction skipped or verified for. */
static uint64 failover_pending = 0;
/* Whether a database without id_sequences_timeline (0.1.0) was logged. */
static bool failover_logged_old = false;

/* A skip made by the open round's transaction, logged once it commits. */
typedef struct FailoverSkip
{
	bool		made;
	bool		known;			/* a timeline was recorded before */
	int64		recorded;		/* that timeline (key) */
	uint64		key;			/* the new one */
	int			skip;
	NameData	db;
} FailoverSkip;

static FailoverSkip failover_done;

/* The schema-qualified name of a table in the extension's schema. */
static char *
failover_qualified(Oid nsp, const char *table)
{
	char	   *schema = get_namespace_name(nsp);

	if (schema == NULL)
		elog(ERROR, "could not find the schema of extension uidgen");
	return psprintf("%s.%s", quote_identifier(schema), quote_identifier(table));
}

/* Answer every request of the round with what held the skip off. */
static void
failover_answer(AllocWork *works, int nworks, const AllocResult *locked)
{
	for (int i = 0; i < nworks; i++)
		works[i].result = *locked;
}

/*
 * Take the locks of id_sequences and id_sequences_timeline if they are
 * free at once; otherwise answer every request with the table, whose lock
 * its caller then waits for.
 */
static bool
failover_lock_tables(Oid relid, Oid tlrel, AllocWork *works, int nworks)
{
	Oid			tables[2] = {relid, tlrel};
	AllocResult locked;

	for (int i = 0; i < 2; i++)
	{
		if (ConditionalLockRelationOid(tables[i], RowExclusiveLock))
			continue;
		memset(&locked, 0, sizeof(locked));
		locked.outcome = ALLOC_LOCKED;
		locked.locked_table = tables[i];
		failover_answer(works, nworks, &locked);
		return false;
	}
	return true;
}

/* The timeline recorded in id_sequences_timeline; false unless one row holds it. */
static bool
failover_recorded(const char *tl, int64 *recorded)
{
	bool		isnull;

	if (SPI_execute(psprintf("SELECT timeline FROM %s", tl), false, 0) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed on %s", FAILOVER_TABLE);
	if (SPI_processed != 1)
		return false;
	*recorded = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											1, &isnull));
	return !isnull;
}

/*
 * Lock every row of id_sequences but those of strategy 'gapless' (never
 * skipped, and held by their callers' transactions), FOR NO KEY UPDATE SKIP
 * LOCKED as the round does; if another transaction holds one, answer every
 * request with that row's locker and return false.
 */
static bool
failover_lock_rows(Oid relid, const char *ids, AllocWork *works, int nworks)
{
	AllocResult locked;
	ItemPointerData tid;
	bool		isnull;

	if (SPI_execute(psprintf("WITH locked AS MATERIALIZED (SELECT l.name FROM %s AS l"
							 " WHERE l.strategy OPERATOR(pg_catalog.<>) 'gapless'"
							 " FOR NO KEY UPDATE SKIP LOCKED)"
							 " SELECT t.ctid FROM %s AS t WHERE NOT EXISTS (SELECT FROM locked"
							 " WHERE locked.name OPERATOR(pg_catalog.=) t.name)"
							 " AND t.strategy OPERATOR(pg_catalog.<>) 'gapless' LIMIT 1",
							 ids, ids), false, 0) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed on id_sequences");
	if (SPI_processed == 0)
		return true;
	tid = *(ItemPointer) DatumGetPointer(SPI_getbinval(SPI_tuptable->vals[0],
													   SPI_tuptable->tupdesc, 1, &isnull));
	memset(&locked, 0, sizeof(locked));
	locked.outcome = ALLOC_LOCKED;
	allocsql_row_locker(relid, &tid, &locked);
	failover_answer(works, nworks, &locked);
	return false;
}

/*
 * Strategy 'table': move next_block_start skip IDs ahead (skip times the
 * increment), in numeric so that nothing wraps, never past the value after
 * the row's last ID (the IDs it has left, seq_room()) and never backwards;
 * a sequence left without room is marked exhausted.  A row numbered per
 * period (period J, reset_skip S) is where the old primary stood, but
 * for fewer than skip IDs; it started any later period S IDs beyond
 * min_value, as the allocator, gapless.c and seq_advance() do (or 0, via
 * one between).  So a row whose period has ended (or that has none yet)
 * restarts in the period of the time now S + skip IDs beyond min_value.
 * If the period after the row's (after the restarted one) begins within
 * the hour, an old primary whose clock was ahead may have handed out
 * numbers of it, from S on (straight from J): reset_skip becomes S + skip,
 * whatever a former promotion left in it.  Otherwise a restart used S up
 * (0) and a row still in its period keeps it.  The rows are locked.
 */
static void
failover_skip_tables(Oid relid, const char *schema, const char *ids, int skip)
{
	Oid			types[2] = {INT8OID, TIMESTAMPTZOID};
	Datum		args[2] = {Int64GetDatum(skip), TimestampTzGetDatum(GetCurrentTimestamp())};
	char	   *inc;
	char	   *room;
	char	   *restart;
	char	   *key;
	char	   *from;
	char	   *room0;
	char	   *soon;

	allocsql_step_sql(relid, schema, &inc, &room);
	if (get_attnum(relid, "reset") == InvalidAttrNumber)
	{
		if (SPI_execute_with_args(psprintf("UPDATE %s AS t SET next_block_start ="
										   " (t.next_block_start::pg_catalog.numeric"
										   " + LEAST($1, %s)::pg_catalog.numeric * %s)::pg_catalog.int8,"
										   " exhausted = t.exhausted OR $1 >= %s"
										   " WHERE t.strategy OPERATOR(pg_catalog.=) 'table'",
										   ids, room, inc, room),
								  1, types, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "SPI_execute failed on id_sequences");
		return;
	}
	key = psprintf("%s.seq_period_key(t.reset, t.time_zone, $2)", schema);
	restart = psprintf("(t.reset OPERATOR(pg_catalog.<>) 'none' AND (t.period IS NULL"
					   " OR t.period OPERATOR(pg_catalog.<) %s))", key);
	/* the restart's IDs beyond min_value, and the room from min_value */
	from = "(t.reset_skip::pg_catalog.numeric OPERATOR(pg_catalog.+) $1)";
	room0 = psprintf("%s.seq_room(t.min_value, t.increment, t.min_value, t.max_value)", schema);
	/* the period after the row's (once restarted) begins within the hour */
	soon = psprintf("(t.reset OPERATOR(pg_catalog.<>) 'none' AND %s.seq_period_key(t.reset,"
					" t.time_zone, $2 + '1 hour'::pg_catalog.interval) OPERATOR(pg_catalog.>)"
					" CASE WHEN %s THEN %s ELSE t.period END)", schema, restart, key);
	if (SPI_execute_with_args(psprintf("UPDATE %s AS t SET next_block_start = CASE WHEN %s"
									   " THEN (t.min_value::pg_catalog.numeric + LEAST(%s, %s)"
									   " * t.increment)::pg_catalog.int8"
									   " ELSE (t.next_block_start::pg_catalog.numeric"
									   " + LEAST($1, %s)::pg_catalog.numeric * %s)::pg_catalog.int8 END,"
									   " exhausted = CASE WHEN %s THEN %s >= %s"
									   " ELSE t.exhausted OR $1 >= %s END,"
									   " period = CASE WHEN %s THEN %s ELSE t.period END,"
									   " reset_skip = CASE WHEN %s THEN LEAST(%s,"
									   " 9223372036854775807::pg_catalog.numeric)::pg_catalog.int8"
									   " WHEN %s THEN 0 ELSE t.reset_skip END"
									   " WHERE t.strategy OPERATOR(pg_catalog.=) 'table'",
									   ids, restart, from, room0, room, inc,
									   restart, from, room0, room,
									   restart, key,
									   soon, from, restart),
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "SPI_execute failed on id_sequences");
}

/*
 * Where the next nextval() of a native sequence starts (PG_INT64_MAX if
 * beyond the last bigint, counting down PG_INT64_MIN), from its own
 * last_value and is_called: not from next_block_start, which a rolled-back
 * transaction may have left behind a setval() (setval() is not undone).  False if the sequence is gone.
 */
static bool
failover_sequence_position(Oid seqoid, int64 increment, int64 *next)
{
	char	   *name = get_rel_name(seqoid);
	char	   *schema = get_namespace_name(get_rel_namespace(seqoid));
	char	   *seqname;
	bool		isnull;
	int64		last;

	if (name == NULL || schema == NULL)
		return false;
	seqname = quote_qualified_identifier(schema, name);
	if (SPI_execute(psprintf("SELECT last_value, is_called FROM %s", seqname), false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not read native sequence %s", seqname);
	last = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)))
		*next = last;
	else if (pg_add_s64_overflow(last, increment, next))
		*next = increment > 0 ? PG_INT64_MAX : PG_INT64_MIN;
	return true;
}

/*
 * Strategy 'sequence': move each native sequence skip IDs ahead of its own
 * position (skip times the row's increment, in its direction), with
 * setval(..., false), and next_block_start with it (as seq_advance() does:
 * seq_next_unused() and the allocator look there until the next
 * nextval()); never past the value after the row's last ID (the IDs it
 * has left, as the allocator counts them), never backwards, within the
 * native sequence's bounds; a sequence left without room is marked
 * exhausted; one moved past its bound by hand is left alone, as is one
 * whose native sequence is gone (its requests fail anyway).  The rows are
 * locked.  Until ALTER EXTENSION UPDATE adds increment and min_value
 * (0.2.0's table), every row counts up by one.
 */
static void
failover_skip_sequences(Oid relid, const char *ids, int skip)
{
	Oid			types[3] = {TEXTOID, INT8OID, BOOLOID};
	Oid			settypes[2] = {REGCLASSOID, INT8OID};
	bool		has_step = get_attnum(relid, "increment") != InvalidAttrNumber;
	SPITupleTable *rows;
	uint64		nrows;

	if (SPI_execute(psprintf("SELECT t.name, t.sequence::pg_catalog.oid, t.max_value,"
							 " s.seqmin, s.seqmax, s.seqincrement, %s"
							 " FROM %s AS t JOIN pg_catalog.pg_sequence AS s"
							 " ON s.seqrelid OPERATOR(pg_catalog.=) t.sequence::pg_catalog.oid"
							 " WHERE t.strategy OPERATOR(pg_catalog.=) 'sequence'",
							 has_step ? "t.increment, t.min_value" :
							 "1::pg_catalog.int8, (-9223372036854775807 - 1)::pg_catalog.int8",
							 ids),
					false, 0) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed on id_sequences");
	rows = SPI_tuptable;
	nrows = SPI_processed;
	for (uint64 i = 0; i < nrows; i++)
	{
		HeapTuple	tup = rows->vals[i];
		TupleDesc	desc = rows->tupdesc;
		bool		isnull;
		Oid			seqoid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
		int64		max_value = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
		int64		seqmin = DatumGetInt64(SPI_getbinval(tup, desc, 4, &isnull));
		int64		seqmax = DatumGetInt64(SPI_getbinval(tup, desc, 5, &isnull));
		int64		increment = DatumGetInt64(SPI_getbinval(tup, desc, 6, &isnull));
		int64		step = DatumGetInt64(SPI_getbinval(tup, desc, 7, &isnull));
		int64		min_value = DatumGetInt64(SPI_getbinval(tup, desc, 8, &isnull));
		int64		next;
		int64		target;
		uint64		room;
		bool		over;
		Datum		args[3];

		if (!failover_sequence_position(seqoid, increment, &next))
			continue;
		room = reservation_room(next, step, min_value, max_value);
		/* moved past its far bound by hand: left there, never moved back */
		if (room == 0 && (step > 0 ? next > max_value : next < min_value))
			continue;
		over = (uint64) skip >= room;
		/* (a bigint: the room leaves |step| values after the last ID) */
		target = next + (int64) Min((uint64) skip, room) * step;
		/* within the native sequence's own bounds (changed by hand) */
		target = Max(Min(target, seqmax), seqmin);
		if (step > 0 ? target < next : target > next)
			continue;
		args[0] = ObjectIdGetDatum(seqoid);
		args[1] = Int64GetDatum(target);
		if (SPI_execute_with_args("SELECT pg_catalog.setval($1, $2, false)", 2, settypes, args,
								  NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not move native sequence %u", seqoid);
		args[0] = SPI_getbinval(tup, desc, 1, &isnull);
		args[2] = BoolGetDatum(over);
		if (SPI_execute_with_args(psprintf("UPDATE %s SET next_block_start = $2,"
										   " exhausted = exhausted OR $3"
										   " WHERE name OPERATOR(pg_catalog.=) $1", ids),
								  3, types, args, NULL, false, 0) != SPI_OK_UPDATE ||
			SPI_processed != 1)
			elog(ERROR, "could not update block sequence \"%s\"",
				 TextDatumGetCString(args[0]));
	}
}

/* Record the key the skip was made for: the table's one row. */
static void
failover_record(const char *tl, uint64 key)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum((int64) key)};

	if (SPI_execute(psprintf("DELETE FROM %s", tl), false, 0) != SPI_OK_DELETE ||
		SPI_execute_with_args(psprintf("INSERT INTO %s (timeline) VALUES ($1)", tl),
							  1, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the timeline in %s", FAILOVER_TABLE);
}

/* A key as text: the timeline, and the nonce of its last take-over if any. */
static char *
failover_key_text(uint64 key)
{
	if (key >> 32 == 0)
		return psprintf("%u", (uint32) key);
	return psprintf("%u (taken over, %08x)", (uint32) key, (uint32) (key >> 32));
}

/* Log the committed skip: one line per database and timeline change. */
static void
failover_log(void)
{
	const FailoverSkip *k = &failover_done;
	char	   *from = k->known ? failover_key_text((uint64) k->recorded) : "unknown";
	char	   *to = failover_key_text(k->key);

	if (k->skip > 0)
		ereport(LOG,
				(errmsg("uidgen skipped every block sequence of database \"%s\" ahead by %d values after the timeline changed from %s to %s",
						NameStr(k->db), k->skip, from, to),
				 errdetail("Blocks that the old primary handed out and whose commits did not reach this server are not handed out again, up to uidgen.promotion_skip values per sequence.")));
	else
		ereport(LOG,
				(errmsg("uidgen did not skip the block sequences of database \"%s\" ahead after the timeline changed from %s to %s",
						NameStr(k->db), from, to),
				 errdetail("uidgen.promotion_skip is 0: blocks that the old primary handed out and whose commits did not reach this server may be handed out again.")));
}

/*
 * The database has no id_sequences_timeline (its extension objects are
 * 0.1.0's, until ALTER EXTENSION uidgen UPDATE): no skip can be recorded,
 * so none is made; said once per allocator, on a promoted server.
 */
static void
failover_log_old(uint64 key)
{
	char	   *db;

	if (failover_logged_old || key <= 1)
		return;
	failover_logged_old = true;
	db = get_database_name(MyDatabaseId);
	ereport(LOG,
			(errmsg("uidgen cannot skip the block sequences of database \"%s\" ahead after a timeline change",
					db ? db : "?"),
			 errdetail("Table %s, which records the timeline of the last skip, does not exist in the database.",
					   FAILOVER_TABLE),
			 errhint("Run ALTER EXTENSION uidgen UPDATE in the database.")));
}

/*
 * At the start of a round, in its transaction and before any block is
 * served: on a timeline this allocator has not seen committed, read the
 * recorded one, and if it differs skip every sequence ahead and record the
 * current one.  False if a lock held the skip off: every request is then
 * answered with it, and the round must serve nothing.
 */
bool
failover_prepare_round(AllocWork *works, int nworks)
{
	uint64		key;
	Oid			relid;
	Oid			nsp;
	Oid			tlrel;
	int64		recorded = 0;
	bool		known;
	char	   *ids;
	char	   *tl;
	char	   *db;
	int			skip = uidgen_promotion_skip;

	failover_pending = 0;
	failover_done.made = false;
	/* (a standby serves nothing: the round fails as read-only) */
	if (RecoveryInProgress())
		return true;
	key = copies_skip_key();
	if (key == failover_verified)
		return true;
	relid = allocsql_table();
	nsp = get_rel_namespace(relid);
	tlrel = get_relname_relid(FAILOVER_TABLE, nsp);
	if (!OidIsValid(tlrel))
	{
		failover_log_old(key);
		failover_pending = key;
		return true;
	}
	if (!failover_lock_tables(relid, tlrel, works, nworks))
		return false;
	ids = failover_qualified(nsp, "id_sequences");
	tl = failover_qualified(nsp, FAILOVER_TABLE);
	known = failover_recorded(tl, &recorded);
	if (!known || recorded != (int64) key)
	{
		if (!failover_lock_rows(relid, ids, works, nworks))
			return false;
		if (skip > 0)
		{
			failover_skip_tables(relid, quote_identifier(get_namespace_name(nsp)), ids, skip);
			failover_skip_sequences(relid, ids, skip);
		}
		CRASH_POINT("skip-after-update");
		failover_record(tl, key);
		CRASH_POINT("skip-after-record");
		failover_done.made = true;
		failover_done.known = known;
		failover_done.recorded = recorded;
		failover_done.key = key;
		failover_done.skip = skip;
		db = get_database_name(MyDatabaseId);
		namestrcpy(&failover_done.db, db ? db : "?");
	}
	failover_pending = key;
	return true;
}

/* After the round: a committed skip or check need not be made again. */
void
failover_end_round(bool committed)
{
	if (committed && failover_done.made)
		CRASH_POINT("skip-after-commit");
	if (committed && failover_pending != 0)
		failover_verified = failover_pending;
	if (committed && failover_done.made)
		failover_log();
	failover_pending = 0;
	failover_done.made = false;
}
