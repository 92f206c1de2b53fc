/*-------------------------------------------------------------------------
 *
 * leaseworker.c
 *	  The "uidgen lease" background worker: it claims, renews and releases
 *	  the worker id lease (uidgen.worker_id_registry) on the registry
 *	  (statements in replicas/registry.c) and publishes it in the lease in
 *	  force (clock/lease.c), which snowflake_next() checks.
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
 * The lease itself, and which lock protects what, is in clock/lease.c.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "clock/clock.h"
#include "clock/lease.h"
#include "clock/statefile.h"
#include "core/compat.h"
#include "core/crashpoint.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "core/workers.h"
#include "replicas/leaseworker.h"
#include "replicas/registry.h"

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

/* When the next renewal is due (monotonic ticks; 0: now). */
static uint64 next_renewal = 0;
/* Has the registry failed since the last success? */
static bool failing = false;
static uint32 we_nap = 0;

/* Register the lease worker (from _PG_init, when a registry is set). */
void
leaseworker_register(void)
{
	if (uidgen_registry_on)
		workers_register("uidgen lease", "uidgen_lease_main");
}

/* Lease worker: the registry failed; keep why, log the first failure of a run. */
static void
lease_note_failure(const char *error)
{
	int32		worker = lease_worker_id();

	lease_note_error(error);
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
lease_claim(void)
{
	int32		max_worker = (1 << uidgen_settings.worker_bits) - 1;
	int32		worker = -1;
	uint64		floor = 0;
	RegistryOutcome outcome = REGISTRY_NONE;

	lease_clear();
	for (int i = 0; i < LEASE_CLAIM_TRIES && outcome == REGISTRY_NONE; i++)
		outcome = registry_claim(lease_holder(), uidgen_worker_lease_ms,
								 max_worker, lease_timeout_ms(), &worker, &floor);
	if (outcome == REGISTRY_FAILED)
		lease_note_failure(registry_last_error());
	if (outcome == REGISTRY_NONE)
		lease_note_failure(psprintf("every worker id from 0 to %d is leased by another server",
									   max_worker));
	if (outcome != REGISTRY_OK)
		return false;

	CRASH_POINT("lease-claim-after-registry");
	lease_claimed(worker, floor);
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
lease_bound_to_report(void)
{
	uint64		now = Max(clock_save_time(), clock_wall_ticks(true));

	return Max(statefile_mark(),
			   now + UIDGEN_MS_TO_TICKS(uidgen_worker_lease_ms) + uidgen_drift_ticks());
}

/* Lease worker: publish a renewed lease, sent at "sent", with its bound. */
static void
lease_renewed(int32 worker, uint64 sent, uint64 bound)
{
	lease_publish(worker, sent, bound);
	if (failing)
		ereport(LOG,
				(errcode(ERRCODE_SUCCESSFUL_COMPLETION),
				 errmsg("uidgen holds a lease on worker id %d again", worker)));
	failing = false;
}

/* Lease worker: the registry names another holder for our worker id. */
static void
lease_lose(int32 worker, const char *holder)
{
	bool		named = holder[0] != '\0' && strcmp(holder, lease_holder()) != 0;

	lease_clear();
	lease_lost(worker, named ? holder : "");
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
lease_renew(void)
{
	int32		worker = lease_held();
	uint64		sent = clock_monotonic_ticks();
	uint64		confirmed = 0;
	char		holder[LEASE_HOLDER_LEN];
	RegistryOutcome outcome;

	outcome = registry_renew(worker, lease_holder(), uidgen_worker_lease_ms,
							 lease_bound_to_report(), lease_timeout_ms(),
							 &confirmed, holder, sizeof(holder));
	if (outcome == REGISTRY_FAILED)
	{
		lease_note_failure(registry_last_error());
		return LEASE_FAILED;
	}
	if (outcome == REGISTRY_NONE)
	{
		lease_lose(worker, holder);
		return LEASE_LOST;
	}
	CRASH_POINT("lease-renew-after-registry");
	lease_renewed(worker, sent, confirmed);
	CRASH_POINT("lease-renew-after-publish");
	next_renewal = sent + UIDGEN_MS_TO_TICKS(lease_period_ms());
	return LEASE_RENEWED;
}

/* Lease worker: claim or renew as due; how long to sleep before the next round (ms). */
static long
lease_round(void)
{
	uint64		now;

	/* a standby has no use for a worker id: it claims one once promoted */
	if (RecoveryInProgress())
		return LEASE_RETRY_MS;
	if (lease_held() < 0 && !lease_claim())
		return LEASE_RETRY_MS;
	now = clock_monotonic_ticks();
	if (now < next_renewal)
		return (long) UIDGEN_TICKS_TO_MS(next_renewal - now) + 1;
	switch (lease_renew())
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
lease_release(void)
{
	int32		worker = lease_held();
	uint64		last;

	if (worker < 0)
		return;
	lease_clear();
	last = clock_latest();
	CRASH_POINT("lease-release-before-registry");
	if (registry_release(worker, lease_holder(), last, lease_timeout_ms()) == REGISTRY_OK)
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
	MemoryContext round_cxt;
	long		nap;

	shmem_require();
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
		nap = lease_round();
		MemoryContextReset(round_cxt);
		if (nap > 0)
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 nap, uidgen_wait_event(&we_nap, "UidgenLeaseNap"));
		ResetLatch(MyLatch);
	}
	lease_release();
	proc_exit(0);
}
