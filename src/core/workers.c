/*-------------------------------------------------------------------------
 *
 * workers.c
 *	  Register one of uidgen's background workers that run for the
 *	  server's whole life (the keeper, the lease worker): attached to
 *	  shared memory, started with the postmaster, restarted a second after
 *	  it exits.  The block allocators are dynamic workers, started on
 *	  demand (blocks/allocslots.c).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "postmaster/bgworker.h"

#include "core/workers.h"

/*
 * Register worker "name" (its name and type in pg_stat_activity), whose
 * entry point is "function" in uidgen's library (from _PG_init).
 */
void
workers_register(const char *name, const char *function)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	strcpy(worker.bgw_library_name, "uidgen");
	strlcpy(worker.bgw_function_name, function, sizeof(worker.bgw_function_name));
	strlcpy(worker.bgw_name, name, sizeof(worker.bgw_name));
	strlcpy(worker.bgw_type, name, sizeof(worker.bgw_type));
	RegisterBackgroundWorker(&worker);
}
