/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  The logical clocks: 64-bit tick counters in shared memory, one for
 *	  snowflake IDs and one for UUIDs, that every backend advances by
 *	  compare-and-swap.
 *
 * Each call takes max(now, last + 1) of its clock, rounded up to the
 * caller's granule (a snowflake ID needs a whole sequence slot, a UUID a
 * single tick), so the ticks handed out of each clock are unique and
 * strictly increasing server-wide, whatever the wall clock does.  Each kind
 * has its own clock so that a burst of snowflake IDs, which runs their
 * clock ahead of the wall clock once the sequence slots of a millisecond are
 * used up, does not move the timestamps of UUIDs too.  Both clocks share
 * the durable high-water mark, the episode state and the drift bound.
 *
 * "Real time" for the drift bound is monotonic time plus ref_offset, which
 * follows the wall clock.  When the wall clock steps back (an episode, at
 * run time or across a restart), the offset is held instead, so real time
 * keeps running monotonically from where it was and a backwards step never
 * turns the drift bound into an outage; once the wall clock has caught up
 * with the logical clock, the offset follows the wall clock again.  The
 * reference is sampled once per millisecond of the logical clock and by the
 * keeper worker, never on every call.
 *
 * Outside episodes the logical clock is therefore never more than
 * uidgen.max_clock_drift ahead of the wall clock: after a crash, when it
 * resumes at the high-water mark, and after a promotion, when it jumps above
 * the primary's last mark and a drift ahead, callers wait until the wall
 * clock is within the drift.
 *
 * Locking: none of its own.  The clocks only move forward, by
 * compare-and-swap; ref_offset, stepped_back, episodes and waits are read
 * and written atomically without a lock.  clock_raise() is called with
 * the state lock held (UIDGEN_LOCK_STATE, by clock/statefile.c,
 * replicas/copies.c and replicas/leaseworker.c), which orders it with the
 * transitions that make its floor durable; the clocks themselves need no
 * lock for it.  The clocks start (clock_start()) in the postmaster, from
 * the state file (clock/statefile.c), before any other process exists.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "miscadmin.h"
#include "port/atomics.h"

#include "clock/clock.h"
#include "core/settings.h"
#include "core/shmem.h"

/* Backward steps smaller than this are absorbed silently. */
#define CLOCK_STEP_TOLERANCE UIDGEN_MS_TO_TICKS(10)

/* One clock, alone on its cache line. */
typedef union ClockCell
{
	pg_atomic_uint64 last;		/* last tick handed out */
	char		pad[PG_CACHE_LINE_SIZE];
} ClockCell;

typedef struct ClockShared
{
	ClockCell	clocks[UIDGEN_NCLOCKS];
	pg_atomic_uint64 ref_offset;	/* real time minus monotonic time, ticks */
	pg_atomic_uint32 stepped_back;	/* in an episode: real time held */
	pg_atomic_uint64 episodes;	/* wall clock steps backwards seen */
	pg_atomic_uint64 waits;		/* calls that waited for real time */
} ClockShared;

static ClockShared *clk = NULL;

/* A kernel clock reading in ticks. */
static inline uint64
clock_read(clockid_t id)
{
	struct timespec ts;
	uint64		ms;
	uint64		sub_ns;

	clock_gettime(id, &ts);
	ms = (uint64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	sub_ns = ts.tv_nsec % 1000000;
	return UIDGEN_MS_TO_TICKS(ms) | ((sub_ns << UIDGEN_TICK_SHIFT) / 1000000);
}

/*
 * Wall-clock time in ticks: precise, or the kernel's coarse clock, which is
 * several times cheaper to read and accurate to its tick (1 to 4 ms).
 */
uint64
clock_wall_ticks(bool precise)
{
	return clock_read(precise ? CLOCK_REALTIME : CLOCK_REALTIME_COARSE);
}

/* Ticks as seconds, for messages. */
static double
ticks_to_seconds(uint64 ticks)
{
	return (double) ticks / UIDGEN_TICKS_PER_MS / 1000.0;
}

/* An episode: let real time run on from "from", decoupled from the wall clock. */
static void
clock_hold_real_time(uint64 from)
{
	pg_atomic_write_u64(&clk->ref_offset, from - clock_read(CLOCK_MONOTONIC_COARSE));
	pg_atomic_write_u32(&clk->stepped_back, 1);
}

/* Count a backwards step of the wall clock and warn about it, once. */
static void
clock_count_episode(uint64 step, bool at_start)
{
	pg_atomic_fetch_add_u64(&clk->episodes, 1);
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 at_start ?
			 errmsg("system clock is %.3f s behind the time uidgen last saved its state",
					ticks_to_seconds(step)) :
			 errmsg("system clock went backwards by %.3f s", ticks_to_seconds(step)),
			 errdetail("IDs continue above the last one issued; their timestamps run ahead of the system clock until it catches up.")));
}

/* Set up the clocks' memory (postmaster); clock_start() starts them. */
static void
clock_shmem_init(void *mem)
{
	ClockShared *c = mem;

	for (int k = 0; k < UIDGEN_NCLOCKS; k++)
		pg_atomic_init_u64(&c->clocks[k].last, 0);
	pg_atomic_init_u64(&c->ref_offset, 0);
	pg_atomic_init_u32(&c->stepped_back, 0);
	pg_atomic_init_u64(&c->episodes, 0);
	pg_atomic_init_u64(&c->waits, 0);
}

/* Register the clocks' shared memory (from _PG_init, when preloaded). */
void
clock_register(void)
{
	shmem_register("uidgen clock", sizeof(ClockShared), 0, clock_shmem_init, (void **) &clk);
}

/*
 * Start the clock above the saved high-water mark and the wall clock.  If
 * the wall clock is behind the time the mark was saved, that is an episode
 * and real time resumes from the saved time.
 */
void
clock_start(uint64 floor, uint64 saved_at)
{
	uint64		wall = clock_wall_ticks(false);

	for (int k = 0; k < UIDGEN_NCLOCKS; k++)
		pg_atomic_write_u64(&clk->clocks[k].last, Max(wall, floor));
	pg_atomic_write_u64(&clk->ref_offset, wall - clock_read(CLOCK_MONOTONIC_COARSE));
	pg_atomic_write_u32(&clk->stepped_back, 0);
	if (saved_at > wall + CLOCK_STEP_TOLERANCE)
	{
		clock_hold_real_time(saved_at);
		clock_count_episode(saved_at - wall, true);
	}
}

/*
 * Monotonic time in ticks (since boot, the kernel's coarse clock): what the
 * deadline of a worker id lease is measured in (clock/lease.c), as
 * wall-clock steps do not move it.
 */
uint64
clock_monotonic_ticks(void)
{
	return clock_read(CLOCK_MONOTONIC_COARSE);
}

/*
 * Time since boot, counting time suspended (Linux's CLOCK_BOOTTIME; the
 * monotonic clock stops while the machine sleeps): for leases that must run
 * out on time even across a suspend.  Elsewhere the monotonic clock.
 */
uint64
clock_boottime_ticks(void)
{
#ifdef CLOCK_BOOTTIME
	return clock_read(CLOCK_BOOTTIME);
#else
	return clock_read(CLOCK_MONOTONIC);
#endif
}

/* Real time, for the drift bound. */
static uint64
clock_real_ticks(void)
{
	return clock_read(CLOCK_MONOTONIC_COARSE) +
		pg_atomic_read_u64(&clk->ref_offset);
}

/*
 * The time the state file records as its save time: real time, which an
 * episode holds above a stepped-back wall clock, so that a restart during
 * the episode still sees it (and does not wait for the wall clock).
 */
uint64
clock_save_time(void)
{
	return Max(clock_wall_ticks(false), clock_real_ticks());
}

/*
 * Compare the wall clock with real time: detect a backwards step, or the
 * end of an episode.  "logical" is a tick just handed out.
 */
void
clock_observe(uint64 logical)
{
	uint64		mono = clock_read(CLOCK_MONOTONIC_COARSE);
	uint64		wall = clock_wall_ticks(false);
	uint64		real = mono + pg_atomic_read_u64(&clk->ref_offset);

	/* preempted between the reads: the pair would show a step that is not */
	if (clock_read(CLOCK_MONOTONIC_COARSE) - mono > CLOCK_STEP_TOLERANCE / 2)
		return;

	if (pg_atomic_read_u32(&clk->stepped_back))
	{
		if (wall + CLOCK_STEP_TOLERANCE >= logical)
		{
			pg_atomic_write_u64(&clk->ref_offset, wall - mono);
			pg_atomic_write_u32(&clk->stepped_back, 0);
		}
	}
	else if (wall + CLOCK_STEP_TOLERANCE < real)
	{
		if (pg_atomic_exchange_u32(&clk->stepped_back, 1) == 0)
			clock_count_episode(real - wall, false);
	}
	else
		pg_atomic_write_u64(&clk->ref_offset, wall - mono);
}

/*
 * Move both clocks past "floor" into a later millisecond, so that every tick
 * handed out from now on is in a millisecond above it.  The caller holds
 * the state lock (UIDGEN_LOCK_STATE).
 */
void
clock_raise(uint64 floor)
{
	uint64		target = floor + UIDGEN_TICKS_PER_MS;
	uint64		last;

	for (int k = 0; k < UIDGEN_NCLOCKS; k++)
	{
		last = pg_atomic_read_u64(&clk->clocks[k].last);
		while (last < target &&
			   !pg_atomic_compare_exchange_u64(&clk->clocks[k].last, &last, target))
			;
	}
	pg_write_barrier();
}

/*
 * After recovery (a promoted standby, a restored backup), the floor to jump
 * past every tick the original server could have issued: above "origin"
 * (its last mark replayed from WAL), and uidgen.max_clock_drift ahead of
 * this server's wall clock, as the original's clock ran at most that far
 * ahead.
 */
uint64
clock_rebase_floor(uint64 origin)
{
	return Max(clock_wall_ticks(true) + uidgen_drift_ticks(), origin);
}

/* Sleep briefly until real time has caught up by "gap" ticks. */
static void
clock_wait(uint64 gap)
{
	long		us = (long) (gap * 1000 / UIDGEN_TICKS_PER_MS);

	CHECK_FOR_INTERRUPTS();
	pg_usleep(Max(1, Min(us, 1000)));
}

/* The later of the clocks' last ticks. */
uint64
clock_latest(void)
{
	uint64		latest = 0;

	for (int k = 0; k < UIDGEN_NCLOCKS; k++)
		latest = Max(latest, pg_atomic_read_u64(&clk->clocks[k].last));
	return latest;
}

/*
 * Hand out the next tick of a clock: above every tick it handed out before,
 * a multiple of "granule" (a power of two), and within the drift bound.
 */
uint64
clock_next(UidgenClockKind kind, uint64 granule, bool precise)
{
	pg_atomic_uint64 *clock = &clk->clocks[kind].last;
	uint64		drift = uidgen_drift_ticks();
	uint64		now = clock_wall_ticks(precise);
	uint64		last = pg_atomic_read_u64(clock);
	uint64		next;
	bool		waited = false;

	for (;;)
	{
		next = (Max(now, last + 1) + granule - 1) & ~(granule - 1);
		if (unlikely(next > now + drift))
		{
			uint64		limit = Max(now, clock_real_ticks()) + drift;

			if (next > limit)
			{
				if (!waited)
					pg_atomic_fetch_add_u64(&clk->waits, 1);
				waited = true;
				clock_wait(next - limit);
				now = clock_wall_ticks(precise);
				last = pg_atomic_read_u64(clock);
				continue;
			}
		}
		if (pg_atomic_compare_exchange_u64(clock, &last, next))
			break;
	}
	if (unlikely(UIDGEN_TICKS_TO_MS(next) != UIDGEN_TICKS_TO_MS(last)))
		clock_observe(next);
	return next;
}

/* How many times the wall clock was seen to step backwards. */
uint64
clock_episodes(void)
{
	return pg_atomic_read_u64(&clk->episodes);
}

/* How many calls waited for real time to catch up with the drift bound. */
uint64
clock_waits(void)
{
	return pg_atomic_read_u64(&clk->waits);
}
