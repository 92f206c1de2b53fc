/*-------------------------------------------------------------------------
 *
 * keeper.c
 *	  The "uidgen keeper" background worker.
 *
 * It sleeps on its latch and wakes when a generator passes the refresh
 * point of the high-water mark, or once a second, to write the next mark
 * (clock/statefile.c), to sample the wall clock (clock/clock.c) and, once
 * recovery has ended, to move the clock past what the original server
 * could have issued (replicas/copies.c).  It needs no
 * database connection, so it runs on primaries and standbys alike.  If it
 * is down, generators write the mark themselves: nothing waits for it.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"

#include "clock/clock.h"
#include "clock/statefile.h"
#include "core/compat.h"
#include "core/shmem.h"
#include "core/workers.h"
#include "replicas/copies.h"
#include "replicas/keeper.h"

#define KEEPER_NAP_MS 1000

/* Register the keeper (from _PG_init, when preloaded). */
void
keeper_register(void)
{
	workers_register("uidgen keeper", "uidgen_keeper_main");
}

/* on_shmem_exit callback: the keeper is gone. */
static void
keeper_detach(int code, Datum arg)
{
	statefile_set_keeper(-1);
}

/* Entry point of the keeper worker. */
void
uidgen_keeper_main(Datum arg)
{
	shmem_require();
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	statefile_set_keeper(UIDGEN_MY_PROCNO);
	on_shmem_exit(keeper_detach, 0);

	while (!ShutdownRequestPending)
	{
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		copies_guard();
		copies_refresh();
		statefile_refresh();
		clock_observe(clock_latest());

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 KEEPER_NAP_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	proc_exit(0);
}
