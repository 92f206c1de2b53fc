/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  Worker ids leased from a registry (uidgen.worker_id_registry): the
 *	  lease in shared memory, what snowflake_next() is told when it has
 *	  none, and the "uidgen lease" background worker that claims, renews and
 *	  releases it (the statements are in registry.c).
 *
 * The registry's clock alone decides when a lease expires there.  Here a
 * lease ends at a deadline on the monotonic clock: the time just before the
 * renewal was sent, plus uidgen.worker_lease, less a margin (a tenth of the
 * lease, at least a second), so it passes before the registry can give the
 * worker id to another server.  Renewals come every third of the lease;
 * when the registry cannot be reached, the worker tries again every second,
 * generation goes on until the deadline and then fails, and resumes with
 * the same worker id once a renewal gets through (if nobody claimed it).
 *
 * Each renewal also reports a bound on the ticks this server can hand out
 * until its deadline (the registry keeps the greatest, id_bound): no tick
 * above the bound the registry confirmed is handed out under the lease, and
 * a server that claims the worker id later moves its clocks above it.  So
 * two servers never issue the same ID with the same worker id, even if
 * timing assumptions fail.
 *
 * What is durable before what (crash points in quotes; "published" is in
 * shared memory, which a crash discards with the lease: the next server
 * life has a new holder name and must claim again):
 *	claim:	 1. the registry row (holder, expiry) committed on the registry
 *			 "lease-claim-after-registry"
 *			 2. the clocks raised above the row's id_bound, lease_held set
 *			 "lease-claim-after-raise"
 *			 3. the first renewal, below (no ID is issued before it)
 *	renewal: 1. expiry and id_bound raised, committed on the registry
 *			 "lease-renew-after-registry"
 *			 2. lease_bound, then the lease word published; IDs issued
 *			 "lease-renew-after-publish"
 *	release: 1. the lease word cleared: no more IDs
 *			 "lease-release-before-registry"
 *			 2. expiry = now() and id_bound = the last tick, committed
 * No ID is issued above a bound the registry has committed, and a lease
 * left behind by a crash stays the dead holder's until the registry's clock
 * expires it; whoever claims it then starts above its id_bound.
 *
 * Locking: lease (deadline and worker id in one word) and lease_bound are
 * written by the lease worker alone and read without a lock: the bound
 * before the word that makes it valid, the word cleared before another
 * worker id is claimed; a generator reads the word, takes its tick, then
 * reads the bound and the word again (lease_confirm()).  lease_held is the
 * lease worker's own.  lease_holder is written by the postmaster before any
 * other process exists.  UidgenShared->lock protects lease_confirmed_at,
 * lease_lost_worker, lease_lost_to and lease_error, and is held while the
 * clocks move above a claimed worker id's bound.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "core/compat.h"
#include "core/crashpoint.h"
#include "clock/lease.h"
#include "replicas/registry.h"
#include "core/timeconv.h"

/* Wait between attempts when the registry fails or nothing is free. */
#define LEASE_RETRY_MS 1000
/* Claims tried in a row when another server takes the chosen id first. */
#define LEASE_CLAIM_TRIES 3

/* What a renewal found. */
typedef enum LeaseStep
{
	LEASE_RENEWED,
	LEASE_FAILED,				/* try again */
	LEASE_LOST					/* another server holds it: claim another */
} LeaseStep;

/* Lease worker: when the next renewal is due (monotonic ticks; 0: now). */
static uint64 next_renewal = 0;
/* Lease worker: has the registry failed since the last success? */
static bool failing = false;
static uint32 we_nap = 0;

/* The deadline is this much before the registry's expiry, at the latest. */
static int
lease_margin_ms(void)
{
	return Max(1000, uidgen_worker_lease_ms / 10);
}

/* How often the lease is renewed. */
static int
lease_period_ms(void)
{
	return uidgen_worker_lease_ms / 3;
}

/* The bound on one call to the registry: up to 5 s, within a period. */
static int
lease_timeout_ms(void)
{
	return Max(1000, Min(5000, lease_period_ms()));
}

/* A tick as the timestamp it stands for, for messages. */
static const char *
lease_tick_str(uint64 tick)
{
	return timestamptz_to_str(unix_ms_to_timestamptz(UIDGEN_TICKS_TO_MS(tick)));
}

/* Register the lease worker (from _PG_init, when a registry is set). */
void
lease_register(void)
{
	BackgroundWorker worker;

	if (!uidgen_registry_on)
		return;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	strcpy(worker.bgw_library_name, "uidgen");
	strcpy(worker.bgw_function_name, "uidgen_lease_main");
	strcpy(worker.bgw_name, "uidgen lease");
	strcpy(worker.bgw_type, "uidgen lease");
	RegisterBackgroundWorker(&worker);
}

/*
 * Shared memory set-up, in the postmaster: no lease, and this server's name
 * in the registry, unique to this shared memory's lifetime (a restart after
 * a crash makes a new one) by a random nonce.
 */
void
lease_shmem_init(UidgenShared *s)
{
	char		host[128];
	uint64		nonce;

	pg_atomic_init_u64(&s->lease, 0);
	pg_atomic_init_u64(&s->lease_bound, 0);
	s->lease_held = -1;
	s->lease_lost_worker = -1;
	s->lease_confirmed_at = 0;
	s->lease_lost_to[0] = '\0';
	s->lease_error[0] = '\0';
	s->lease_holder[0] = '\0';
	if (!uidgen_registry_on)
		return;
	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "unknown host", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	if (!pg_strong_random(&nonce, sizeof(nonce)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random nonce for the worker id lease")));
	snprintf(s->lease_holder, UIDGEN_HOLDER_LEN,
			 "%s:%d pid %d system %llu nonce %016llx",
			 host, PostPortNumber, (int) MyProcPid,
			 (unsigned long long) GetSystemIdentifier(),
			 (unsigned long long) nonce);
}

/* The error of a generator that holds no lease. */
void
lease_refuse(UidgenShared *s)
{
	uint64		lease = pg_atomic_read_u64(&s->lease);
	int32		worker = lease != 0 ? LEASE_WORKER(lease) : s->lease_held;
	int32		lost;
	TimestampTz confirmed;
	char		lost_to[UIDGEN_HOLDER_LEN];
	char		error[sizeof(s->lease_error)];
	StringInfoData detail;

	LWLockAcquire(s->lock, LW_SHARED);
	lost = s->lease_lost_worker;
	confirmed = s->lease_confirmed_at;
	strlcpy(lost_to, s->lease_lost_to, sizeof(lost_to));
	strlcpy(error, s->lease_error, sizeof(error));
	LWLockRelease(s->lock);

	initStringInfo(&detail);
	if (lost >= 0)
		appendStringInfo(&detail, "The lease on worker id %d was taken by %s%s%s.",
						 lost, lost_to[0] ? "\"" : "another server",
						 lost_to, lost_to[0] ? "\"" : "");
	else if (confirmed == 0)
		appendStringInfoString(&detail, "The registry has not granted this server a lease since it started.");
	else
		appendStringInfo(&detail, "The registry last confirmed the lease on worker id %d at %s.",
						 worker, timestamptz_to_str(confirmed));
	/* the server log has libpq's message: it may name the registry's host and user */
	if (error[0] != '\0')
		appendStringInfoString(&detail, " The last attempt to reach the registry failed; the server log says why.");
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("uidgen holds no lease on a worker id"),
			 errdetail("%s", detail.data),
			 errhint("Check that the registry in uidgen.worker_id_registry is reachable; generation resumes when the lease is renewed.")));
}

/* The error of a generator whose tick is above the lease's confirmed bound. */
void
lease_refuse_bound(UidgenShared *s, uint64 lease, uint64 bound)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the snowflake clock is past the bound the registry confirmed for worker id %d",
					LEASE_WORKER(lease)),
			 errdetail("IDs with this worker id may go up to %s until the next renewal; the system clock may have jumped forward.",
					   lease_tick_str(bound)),
			 errhint("Generation resumes when the lease is renewed, within %d ms.",
					 lease_period_ms())));
}

/* The worker id this server holds a lease on, or -1. */
int32
lease_worker_id(UidgenShared *s)
{
	uint64		lease = pg_atomic_read_u64(&s->lease);

	if (lease == 0 ||
		UIDGEN_TICKS_TO_MS(clock_monotonic_ticks()) >= LEASE_DEADLINE_MS(lease))
		return -1;
	return LEASE_WORKER(lease);
}

/* The wall-clock time the last lease granted lapses (or lapsed); false if none. */
bool
lease_deadline(UidgenShared *s, TimestampTz *at)
{
	uint64		lease = pg_atomic_read_u64(&s->lease);
	int64		left_ms;

	if (lease == 0)
		return false;
	left_ms = (int64) LEASE_DEADLINE_MS(lease) -
		(int64) UIDGEN_TICKS_TO_MS(clock_monotonic_ticks());
	*at = GetCurrentTimestamp() + left_ms * 1000;
	return true;
}

/* Lease worker: the registry failed; keep why, log the first failure of a run. */
static void
lease_note_failure(UidgenShared *s, const char *error)
{
	int32		worker = lease_worker_id(s);

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	strlcpy(s->lease_error, error, sizeof(s->lease_error));
	LWLockRelease(s->lock);
	if (!failing)
		ereport(LOG,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("uidgen could not obtain a worker id lease from the registry: %s", error),
				 worker >= 0 ?
				 errdetail("Generation goes on until the lease on worker id %d lapses, at most %d ms after its last renewal; uidgen tries again every second.",
						   worker, uidgen_worker_lease_ms - lease_margin_ms()) :
				 errdetail("snowflake_next() fails until a lease is granted; uidgen tries again every second.")));
	failing = true;
}

/*
 * Lease worker: claim a worker id, and move the clocks above the bound the
 * registry held for it (and above every tick handed out before, so that
 * IDs stay in order across the change of worker id).  True once held.
 */
static bool
lease_claim(UidgenShared *s)
{
	int32		max_worker = (1 << uidgen_settings.worker_bits) - 1;
	int32		worker = -1;
	uint64		floor = 0;
	RegistryOutcome outcome = REGISTRY_NONE;

	pg_atomic_write_u64(&s->lease, 0);
	for (int i = 0; i < LEASE_CLAIM_TRIES && outcome == REGISTRY_NONE; i++)
		outcome = registry_claim(s->lease_holder, uidgen_worker_lease_ms,
								 max_worker, lease_timeout_ms(), &worker, &floor);
	if (outcome == REGISTRY_FAILED)
		lease_note_failure(s, registry_last_error());
	if (outcome == REGISTRY_NONE)
		lease_note_failure(s, psprintf("every worker id from 0 to %d is leased by another server",
									   max_worker));
	if (outcome != REGISTRY_OK)
		return false;

	CRASH_POINT("lease-claim-after-registry");
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	clock_raise(s, Max(floor, clock_latest(s)));
	s->lease_held = worker;
	LWLockRelease(s->lock);
	CRASH_POINT("lease-claim-after-raise");
	next_renewal = 0;
	ereport(LOG,
			(errcode(ERRCODE_SUCCESSFUL_COMPLETION),
			 errmsg("uidgen leased worker id %d from the registry", worker),
			 floor == 0 ?
			 errdetail("The registry records no ID issued with it.") :
			 errdetail("Snowflake IDs with it start above %s, the bound the registry records for it.",
					   lease_tick_str(floor))));
	return true;
}

/*
 * Lease worker: the bound to report, in ticks: every tick this server can
 * hand out until the deadline of the lease being renewed.  No tick is more
 * than uidgen.max_clock_drift ahead of real time (clock.c), and the
 * deadline is less than a lease away.
 */
static uint64
lease_bound_to_report(UidgenShared *s)
{
	uint64		now = Max(clock_save_time(s), clock_wall_ticks(true));

	return Max(pg_atomic_read_u64(&s->hwm),
			   now + UIDGEN_MS_TO_TICKS(uidgen_worker_lease_ms) + uidgen_drift_ticks());
}

/* Lease worker: publish a renewed lease, sent at "sent", with its bound. */
static void
lease_publish(UidgenShared *s, int32 worker, uint64 sent, uint64 bound)
{
	uint64		deadline_ms = UIDGEN_TICKS_TO_MS(sent) + uidgen_worker_lease_ms -
		lease_margin_ms();

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	s->lease_confirmed_at = GetCurrentTimestamp();
	s->lease_lost_worker = -1;
	s->lease_lost_to[0] = '\0';
	s->lease_error[0] = '\0';
	LWLockRelease(s->lock);
	pg_atomic_write_u64(&s->lease_bound, bound);
	pg_write_barrier();
	pg_atomic_write_u64(&s->lease, (deadline_ms << UIDGEN_MAX_LAYOUT_BITS) | (uint64) worker);
	if (failing)
		ereport(LOG,
				(errcode(ERRCODE_SUCCESSFUL_COMPLETION),
				 errmsg("uidgen holds a lease on worker id %d again", worker)));
	failing = false;
}

/* Lease worker: the registry names another holder for our worker id. */
static void
lease_lose(UidgenShared *s, int32 worker, const char *holder)
{
	bool		named = holder[0] != '\0' && strcmp(holder, s->lease_holder) != 0;

	pg_atomic_write_u64(&s->lease, 0);
	pg_memory_barrier();
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	s->lease_held = -1;
	s->lease_lost_worker = worker;
	strlcpy(s->lease_lost_to, named ? holder : "", sizeof(s->lease_lost_to));
	LWLockRelease(s->lock);
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("uidgen lost worker id %d to another server", worker),
			 named ?
			 errdetail("The registry names \"%s\" as its holder now; another server may claim a worker id only after its lease lapsed without renewal.",
					   holder) :
			 errdetail("The registry no longer has a lease on it for this server."),
			 errhint("uidgen claims another worker id; snowflake_next() fails until it has one.")));
}

/* Lease worker: renew the lease held (after a claim, at once). */
static LeaseStep
lease_renew(UidgenShared *s)
{
	int32		worker = s->lease_held;
	uint64		sent = clock_monotonic_ticks();
	uint64		confirmed = 0;
	char		holder[UIDGEN_HOLDER_LEN];
	RegistryOutcome outcome;

	outcome = registry_renew(worker, s->lease_holder, uidgen_worker_lease_ms,
							 lease_bound_to_report(s), lease_timeout_ms(),
							 &confirmed, holder, sizeof(holder));
	if (outcome == REGISTRY_FAILED)
	{
		lease_note_failure(s, registry_last_error());
		return LEASE_FAILED;
	}
	if (outcome == REGISTRY_NONE)
	{
		lease_lose(s, worker, holder);
		return LEASE_LOST;
	}
	CRASH_POINT("lease-renew-after-registry");
	lease_publish(s, worker, sent, confirmed);
	CRASH_POINT("lease-renew-after-publish");
	next_renewal = sent + UIDGEN_MS_TO_TICKS(lease_period_ms());
	return LEASE_RENEWED;
}

/* Lease worker: claim or renew as due; how long to sleep before the next round (ms). */
static long
lease_round(UidgenShared *s)
{
	uint64		now;

	/* a standby has no use for a worker id: it claims one once promoted */
	if (RecoveryInProgress())
		return LEASE_RETRY_MS;
	if (s->lease_held < 0 && !lease_claim(s))
		return LEASE_RETRY_MS;
	now = clock_monotonic_ticks();
	if (now < next_renewal)
		return (long) UIDGEN_TICKS_TO_MS(next_renewal - now) + 1;
	switch (lease_renew(s))
	{
		case LEASE_RENEWED:
			return lease_period_ms();
		case LEASE_FAILED:
			return LEASE_RETRY_MS;
		case LEASE_LOST:
			break;
	}
	return 0;
}

/*
 * Lease worker, at shutdown: give the worker id back, so that another
 * server can claim it at once.  No tick is handed out under the lease once
 * it is cleared, so the last tick of the clocks is an exact bound.
 */
static void
lease_release(UidgenShared *s)
{
	int32		worker = s->lease_held;
	uint64		last;

	if (worker < 0)
		return;
	pg_atomic_write_u64(&s->lease, 0);
	pg_memory_barrier();
	last = clock_latest(s);
	CRASH_POINT("lease-release-before-registry");
	if (registry_release(worker, s->lease_holder, last, lease_timeout_ms()) == REGISTRY_OK)
		ereport(LOG,
				(errcode(ERRCODE_SUCCESSFUL_COMPLETION),
				 errmsg("uidgen released worker id %d", worker),
				 errdetail("The registry records IDs issued with it up to %s.",
						   lease_tick_str(last))));
}

/* Entry point of the lease worker. */
void
uidgen_lease_main(Datum arg)
{
	UidgenShared *s = shmem_get();
	MemoryContext round_cxt;
	long		nap;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	round_cxt = AllocSetContextCreate(TopMemoryContext, "uidgen lease",
									  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(round_cxt);

	while (!ShutdownRequestPending)
	{
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		nap = lease_round(s);
		MemoryContextReset(round_cxt);
		if (nap > 0)
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 nap, uidgen_wait_event(&we_nap, "UidgenLeaseNap"));
		ResetLatch(MyLatch);
	}
	lease_release(s);
	proc_exit(0);
}
