/*-------------------------------------------------------------------------
 *
 * statefile.c
 *	  Persist the high-water mark of the logical clocks, and the settings
 *	  that shape snowflake IDs, in $PGDATA/uidgen.state.
 *
 * No tick is handed out unless the file on disk already holds a mark at or
 * above it, so after a crash the clock resumes above every ID issued.  The
 * mark is written a window ahead of the clock (durable write, fsync and
 * rename), normally by the keeper worker when the clock passes the middle
 * of the window; a backend writes it itself only if the clock reaches the
 * mark first.  All writes happen under the state lock, but for the last
 * one: when the postmaster exits cleanly it saves the exact last tick.  The
 * mark never moves down while the server runs.  On a primary each new mark
 * also goes to WAL (clock/walmark.c) before a tick above the old one is
 * used.
 *
 * What is durable before what, for the mark (statefile_advance()): the
 * file with the new mark (fsync, rename, directory fsync); then, on a
 * primary, its WAL record, flushed (clock/walmark.c); then the mark in
 * shared memory, and only then a tick above the old mark.  A crash in
 * between leaves a mark on disk above every tick handed out.
 * statefile_commit() does the same for replicas/copies.c's transitions,
 * with the clocks raised last:
 *
 *	step				1. durable first				2. then in shared memory
 *	----				----------------				------------------------
 *	mark advance		state file with the new mark	hwm, hwm_refresh_at;
 *	(statefile_advance)	"mark-after-file"; on a primary	then ticks below the
 *						the WAL record, flushed			new mark
 *						"mark-after-wal"
 *	commit				"commit-before-file"; state		hwm, hwm_refresh_at;
 *	(statefile_commit)	file "commit-after-file"; on a	the clocks raised; the
 *						primary the WAL record			caller publishes the
 *						"commit-after-wal"				rest (copies.c)
 *	clean shutdown		state file with the exact last	(no process is left)
 *	(statefile_save_exact) tick
 * The exact save at a clean shutdown lowers the mark to the last tick, when
 * no process can hand out another.
 *
 * The file also records what replicas/copies.c keeps: the server it
 * vouches for (system identifier, data directory, timeline), and for a copy
 * not yet settled, why it is one, its origin's worker id and the last mark
 * replayed from its origin's WAL.  Those fields live in copies.c's shared
 * memory; copies.c hands them over through the functions it registers
 * (statefile_set_copies()): one that fills them into each file written,
 * one that takes them from the file read at start-up.  This module
 * includes nothing of replicas/.
 *
 * Locking: the state lock (UIDGEN_LOCK_STATE, core/shmem.h) is held for
 * every write of the file but the last, and protects problem, recorded and
 * saved_origin_mark (written at start-up, and by each write); hwm and
 * hwm_refresh_at are written under it, after the file that holds the new
 * mark is durable, and read without it, as are adopted (the worker id
 * adopted from Citus, statefile_adopt_worker()) and refused (a worker id
 * refused for a Citus conflict, statefile_refuse_worker()), each after the
 * file that holds it; keeper_procno is written by the keeper worker alone.
 *
 * The file's format, and its reading and durable writing, are
 * clock/statefileio.c's.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"

#include "clock/clock.h"
#include "clock/layout.h"
#include "clock/lease.h"
#include "clock/statefile.h"
#include "clock/walmark.h"
#include "core/crashpoint.h"
#include "core/settings.h"
#include "core/shmem.h"

typedef struct StateShared
{
	pg_atomic_uint64 hwm;		/* durable: no tick above it was handed out */
	pg_atomic_uint64 hwm_refresh_at;	/* wake the keeper past this tick */
	int			keeper_procno;	/* keeper's PGPROC number, or -1 */
	UidgenStateProblem problem;
	UidgenSettings recorded;	/* settings the state file vouches for */
	uint64		saved_origin_mark;	/* origin_mark as the file on disk holds it */
	pg_atomic_uint32 adopted;	/* worker id adopted from Citus, plus one; 0 if none */
	pg_atomic_uint32 refused;	/* worker id refused for a conflict, plus one; 0 if none */
} StateShared;

static StateShared *st = NULL;

/* What replicas/copies.c registered (statefile_set_copies()). */
static StateFileCopiesStart take_copies = NULL;
static StateFileCopiesFill fill_copies = NULL;

static void statefile_save_exact(int code, Datum arg);

/*
 * How far ahead of the clock the mark is written: a fixed two seconds, so
 * that the wait after a crash (up to one window) does not grow with
 * uidgen.max_clock_drift.
 */
#define STATE_WINDOW UIDGEN_MS_TO_TICKS(2000)

/* Read the file; false if it is missing, and problem set if unusable. */
static bool
statefile_read(StateFileData *d)
{
	StateFileRead r = statefile_read_at(UIDGEN_STATE_FILE, d);

	if (r == STATE_READ_MISSING)
		return false;
	if (r == STATE_READ_CORRUPT)
	{
		st->problem = UIDGEN_STATE_CORRUPT;
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("uidgen state file \"%s\" is unreadable or corrupt", UIDGEN_STATE_FILE),
				 errdetail("uidgen will not generate IDs, because it cannot tell which IDs were already issued.")));
		return false;
	}
	if (d->upgrade_unknown)
	{
		st->problem = UIDGEN_STATE_UPGRADE_UNKNOWN;
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen does not know the high-water mark of the cluster this one was upgraded from"),
				 errdetail("pg_upgrade ran without handing over uidgen's state; snowflake_next() and uuidv7_next() are disabled.")));
	}
	return true;
}

/* Accept or refuse a change of settings since the file was written. */
static void
statefile_check_settings(const StateFileData *d, uint64 floor)
{
	if (memcmp(&d->settings, &uidgen_settings, sizeof(UidgenSettings)) == 0)
		return;
	if (!layout_change_is_safe(&d->settings, &uidgen_settings, floor))
	{
		st->recorded = d->settings;
		st->problem = UIDGEN_STATE_SETTINGS_CHANGED;
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uidgen settings changed in a way that could repeat issued snowflake IDs"),
				 errdetail("%s", layout_settings_detail(&d->settings)),
				 errhint("snowflake_next() is disabled until the settings are restored.")));
		return;
	}
	ereport(LOG,
			(errmsg("uidgen settings changed; new snowflake IDs are above every ID issued before")));
}

/*
 * Shared memory set-up, in the postmaster, before any other process
 * exists: read the file; start the clocks above its mark (the millisecond
 * after it), from the time it was saved; hand what it says of copies to
 * replicas/copies.c (statefile_set_copies()), which settles them; and only
 * then arm the refresh point: the mark moves once a tick above the start is
 * handed out.
 */
static void
statefile_shmem_init(void *mem)
{
	StateFileData d;
	bool		found;
	uint64		floor = 0;

	st->keeper_procno = -1;
	pg_atomic_init_u64(&st->hwm, 0);
	pg_atomic_init_u64(&st->hwm_refresh_at, 0);
	pg_atomic_init_u32(&st->adopted, 0);
	pg_atomic_init_u32(&st->refused, 0);
	st->recorded = uidgen_settings;
	st->problem = UIDGEN_STATE_OK;
	if (!IsUnderPostmaster)
		on_shmem_exit(statefile_save_exact, (Datum) 0);
	found = statefile_read(&d);
	if (found)
	{
		floor = UIDGEN_MS_TO_TICKS(UIDGEN_TICKS_TO_MS(d.hwm) + 1);
		pg_atomic_write_u64(&st->hwm, d.hwm);
		st->saved_origin_mark = d.origin_mark;
		pg_atomic_write_u32(&st->adopted, d.adopted_worker);
		pg_atomic_write_u32(&st->refused, d.refused_worker);
		/* nothing generates until an operator supplies the old state: keep it so */
		if (st->problem == UIDGEN_STATE_UPGRADE_UNKNOWN)
			st->recorded = d.settings;
		else
			statefile_check_settings(&d, floor);
	}
	clock_start(floor, found ? d.saved_at : 0);
	if (take_copies)
		take_copies(found ? &d : NULL);
	pg_atomic_write_u64(&st->hwm_refresh_at, clock_latest());
}

/*
 * Register the state file's shared memory (from _PG_init, when preloaded),
 * after the clocks' and the copies' (clock_register(), copies_register()),
 * which its set-up starts.
 */
void
statefile_register(void)
{
	shmem_register("uidgen state file", sizeof(StateShared), 0,
				   statefile_shmem_init, (void **) &st);
}

/*
 * replicas/copies.c's part of the file (from _PG_init): "start" takes what
 * the file read at start-up says of copies (NULL if there was none), "fill"
 * writes the copy state in force into each file written.
 */
void
statefile_set_copies(StateFileCopiesStart start, StateFileCopiesFill fill)
{
	take_copies = start;
	fill_copies = fill;
}

/* Fill "d" with the state shared memory holds, under mark "hwm". */
void
statefile_fill(StateFileData *d, uint64 hwm)
{
	memset(d, 0, sizeof(*d));
	d->hwm = hwm;
	d->settings = st->recorded;
	d->upgrade_unknown = st->problem == UIDGEN_STATE_UPGRADE_UNKNOWN;
	d->origin_worker = -1;
	d->adopted_worker = pg_atomic_read_u32(&st->adopted);
	d->refused_worker = pg_atomic_read_u32(&st->refused);
	if (fill_copies)
		fill_copies(d);
}

/* Write this server's file durably from "d"; false (after elevel) on failure. */
static bool
statefile_write_data(StateFileData *d, int elevel)
{
	d->saved_at = clock_save_time();
	if (!statefile_write_at(UIDGEN_STATE_FILE, d, elevel))
		return false;
	st->saved_origin_mark = d->origin_mark;
	return true;
}

/* Write this server's file durably with a new mark; false (after elevel) on failure. */
static bool
statefile_write(uint64 hwm, int elevel)
{
	StateFileData d;

	statefile_fill(&d, hwm);
	return statefile_write_data(&d, elevel);
}

/* The worker id IDs are issued under now, for the mark's WAL record; -1 if none. */
static int32
statefile_worker_in_force(void)
{
	return uidgen_registry_on ? lease_worker_id() : statefile_own_worker();
}

/*
 * A transition of copies.c (end of recovery, take-over, a copy settled):
 * make "d", the state it leads to, durable with a mark that covers "floor",
 * before anything can use it.  In this order: the state file (fsync and
 * rename); on a primary, the mark's WAL record, flushed; then the mark and
 * the clocks above "floor" in shared memory.  The caller publishes d's
 * fields in shared memory after this returns, and holds the lock
 * exclusively throughout.  On failure (ERROR) nothing has changed in
 * shared memory, and the file holds the old state or the new one.
 */
void
statefile_commit(StateFileData *d, uint64 floor)
{
	uint64		old = pg_atomic_read_u64(&st->hwm);
	uint64		mark = Max(old, floor + STATE_WINDOW);

	d->hwm = mark;
	CRASH_POINT("commit-before-file");
	(void) statefile_write_data(d, ERROR);
	CRASH_POINT("commit-after-file");
	if (IsUnderPostmaster && !RecoveryInProgress())
	{
		walmark_log(mark, statefile_worker_in_force());
		CRASH_POINT("commit-after-wal");
	}
	if (mark != old)
	{
		pg_atomic_write_u64(&st->hwm, mark);
		pg_atomic_write_u64(&st->hwm_refresh_at, mark - STATE_WINDOW / 2);
	}
	clock_raise(floor);
}

/* Write the file again with the mark in force (caller holds the lock). */
void
statefile_save(int elevel)
{
	(void) statefile_write(pg_atomic_read_u64(&st->hwm), elevel);
}

/*
 * Postmaster exit: every process is gone, so the exact last tick can replace
 * the mark, and the next start resumes right above it instead of a window
 * ahead.  Not after a crash, when shared memory cannot be trusted.
 */
static void
statefile_save_exact(int code, Datum arg)
{
	if (code == 0 && st->problem != UIDGEN_STATE_CORRUPT)
		(void) statefile_write(clock_latest(), LOG);
}

/*
 * If "tick" is past the refresh point, durably write a mark a window beyond
 * it and publish it.  Re-checked under the lock, so that callers racing past
 * the same point write the file once.  The mark never moves down: a tick
 * past the refresh point is above the mark less half a window, so the new
 * mark is above the old one.
 */
static void
statefile_advance(uint64 tick)
{
	LWLockAcquire(shmem_lock(UIDGEN_LOCK_STATE), LW_EXCLUSIVE);
	if (tick > pg_atomic_read_u64(&st->hwm_refresh_at))
	{
		uint64		mark = tick + STATE_WINDOW;

		Assert(mark > pg_atomic_read_u64(&st->hwm));
		(void) statefile_write(mark, ERROR);
		CRASH_POINT("mark-after-file");
		/* standbys learn it before any tick above the old mark is used */
		if (!RecoveryInProgress())
		{
			walmark_log(mark, statefile_worker_in_force());
			CRASH_POINT("mark-after-wal");
		}
		pg_atomic_write_u64(&st->hwm, mark);
		pg_atomic_write_u64(&st->hwm_refresh_at, mark - STATE_WINDOW / 2);
	}
	LWLockRelease(shmem_lock(UIDGEN_LOCK_STATE));
}

/* Wake the keeper worker (replicas/keeper.c), if it is running. */
static void
statefile_wake_keeper(void)
{
	int			procno = st->keeper_procno;

	if (procno >= 0)
		SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

/*
 * A tick past the refresh point is about to be handed out: if it is beyond
 * the durable mark, make a new mark durable before the tick is used;
 * otherwise let the keeper move the mark in the background.
 */
static void
statefile_cover(uint64 tick)
{
	if (tick > pg_atomic_read_u64(&st->hwm))
		statefile_advance(tick);
	else
		statefile_wake_keeper();
}

/*
 * The generators' way to a tick: the next tick of a clock (clock/clock.c),
 * handed out only once a durable mark covers it.
 */
uint64
statefile_next_tick(UidgenClockKind kind, uint64 granule, bool precise)
{
	uint64		tick = clock_next(kind, granule, precise);

	if (unlikely(tick > pg_atomic_read_u64(&st->hwm_refresh_at)))
		statefile_cover(tick);
	return tick;
}

/* Keeper: move the mark a window ahead if the clock passed its middle. */
void
statefile_refresh(void)
{
	if (st->problem != UIDGEN_STATE_CORRUPT)
		statefile_advance(clock_latest());
}

/* Refuse to generate if the state file could not be trusted at start-up. */
void
statefile_check_usable(void)
{
	if (likely(st->problem < UIDGEN_STATE_CORRUPT))
		return;
	if (st->problem == UIDGEN_STATE_UPGRADE_UNKNOWN)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen does not know the high-water mark of the cluster this one was upgraded from"),
				 errdetail("pg_upgrade ran without handing over uidgen's state, so new IDs could repeat the old cluster's."),
				 errhint("Stop the server, copy the file \"%s\" from the old cluster's data directory into this one, start the server and run SELECT uidgen_take_over(). If the old cluster never issued IDs with uidgen, remove the file instead.",
						 UIDGEN_STATE_FILE)));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("uidgen state file \"%s\" is corrupt", UIDGEN_STATE_FILE),
			 errdetail("uidgen cannot tell which IDs were already issued."),
			 errhint("Stop the server, make sure the system clock is ahead of every ID issued so far, remove the file from the data directory, and start the server.")));
}

/* The durable high-water mark: no tick above it was handed out. */
uint64
statefile_mark(void)
{
	return pg_atomic_read_u64(&st->hwm);
}

/* Why generation is refused, as found in the state file at start-up. */
UidgenStateProblem
statefile_problem(void)
{
	return st->problem;
}

/* The settings the state file vouches for. */
const UidgenSettings *
statefile_recorded(void)
{
	return &st->recorded;
}

/* The origin mark the file on disk holds (state lock held). */
uint64
statefile_saved_origin_mark(void)
{
	return st->saved_origin_mark;
}

/*
 * The worker id this server generates under without a registry:
 * uidgen.worker_id if set, else the one adopted from Citus, else
 * uidgen.worker_id's value (0: no worker id, snowflake_next() refuses).
 */
int32
statefile_own_worker(void)
{
	int32		adopted = statefile_adopted_worker();

	return uidgen_settings.worker_id_set || adopted < 0 ? uidgen_settings.worker_id : adopted;
}

/* The same for the server that wrote "d": the worker id its IDs carry. */
int32
statefile_file_worker(const StateFileData *d)
{
	return d->settings.worker_id_set || d->adopted_worker == 0 ?
		d->settings.worker_id : (int32) d->adopted_worker - 1;
}

/* The worker id adopted from Citus (replicas/citus.c), or -1. */
int32
statefile_adopted_worker(void)
{
	return (int32) pg_atomic_read_u32(&st->adopted) - 1;
}

/*
 * Adopt "worker" as this server's worker id (replicas/citus.c): durable in
 * the state file, and on a primary in a WAL mark record under it, before
 * it is published in shared memory, where snowflake_next() reads it.
 *
 *	step			1. durable first				2. then in shared memory
 *	----			----------------				------------------------
 *	adoption		"adopt-before-file"; state		adopted; then IDs
 *					file with the worker id and		under it
 *					the mark "adopt-after-file";
 *					WAL mark record under it
 *					"adopt-after-wal"
 *
 * A crash before the rename leaves the old file: nothing was issued under
 * the new worker id, and the next call adopts it again.  Every tick is
 * unique to this server whatever worker id it goes out with, so IDs under
 * the old and the new worker id cannot repeat each other.
 */
void
statefile_adopt_worker(int32 worker)
{
	StateFileData d;

	/* a corrupt file or an unknown upgrade must stay as found */
	statefile_check_usable();
	LWLockAcquire(shmem_lock(UIDGEN_LOCK_STATE), LW_EXCLUSIVE);
	if (statefile_adopted_worker() != worker)
	{
		statefile_fill(&d, pg_atomic_read_u64(&st->hwm));
		d.adopted_worker = (uint32) worker + 1;
		CRASH_POINT("adopt-before-file");
		(void) statefile_write_data(&d, ERROR);
		CRASH_POINT("adopt-after-file");
		if (!RecoveryInProgress())
		{
			walmark_log(d.hwm, worker);
			CRASH_POINT("adopt-after-wal");
		}
		pg_atomic_write_u32(&st->adopted, (uint32) worker + 1);
	}
	LWLockRelease(shmem_lock(UIDGEN_LOCK_STATE));
}

/* The worker id refused for a conflict (replicas/citus.c), or -1. */
int32
statefile_refused_worker(void)
{
	return (int32) pg_atomic_read_u32(&st->refused) - 1;
}

/*
 * Refuse snowflake IDs under "worker", which another node of the Citus
 * cluster also uses, or with -1 lift the refusal (replicas/citus.c):
 * durable in the state file before shared memory shows it, so that no
 * crash restart ends a refusal that uidgen_citus_check() has reported.
 *
 *	step			1. durable first				2. then in shared memory
 *	----			----------------				------------------------
 *	refusal			"refuse-before-file"; state		refused; snowflake_next()
 *					file with the refused worker	refuses from then on
 *					id "refuse-after-file"
 *	lifted			state file without it			refused cleared; then IDs
 *
 * A crash before the rename leaves the old file: a refusal not made
 * durable was not reported (uidgen_citus_refuse() had not returned), and a
 * refusal not lifted still holds.  The mark and the clocks do not move.
 */
void
statefile_refuse_worker(int32 worker)
{
	StateFileData d;

	/* a corrupt file or an unknown upgrade must stay as found (it refuses anyway) */
	statefile_check_usable();
	LWLockAcquire(shmem_lock(UIDGEN_LOCK_STATE), LW_EXCLUSIVE);
	if (statefile_refused_worker() != worker)
	{
		statefile_fill(&d, pg_atomic_read_u64(&st->hwm));
		d.refused_worker = (uint32) (worker + 1);
		CRASH_POINT("refuse-before-file");
		(void) statefile_write_data(&d, ERROR);
		CRASH_POINT("refuse-after-file");
		pg_atomic_write_u32(&st->refused, (uint32) (worker + 1));
	}
	LWLockRelease(shmem_lock(UIDGEN_LOCK_STATE));
}

/* The keeper worker's PGPROC number, to wake it; -1 when it exits. */
void
statefile_set_keeper(int procno)
{
	st->keeper_procno = procno;
}
