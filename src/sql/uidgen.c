/*-------------------------------------------------------------------------
 *
 * uidgen.c
 *	  Module entry point: _PG_init(), which defines the settings
 *	  (core/settings.c) and has each module register what it needs: its
 *	  shared memory, hooks, WAL resource manager and background workers.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "blocks/blocks.h"
#include "clock/clock.h"
#include "clock/lease.h"
#include "clock/statefile.h"
#include "clock/walmark.h"
#include "core/counters.h"
#include "core/crashpoint.h"
#include "core/settings.h"
#include "replicas/citusblocks.h"
#include "replicas/copies.h"
#include "replicas/keeper.h"
#include "replicas/leaseworker.h"
#include "replicas/upgrade.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_init(void);

/*
 * Module load.  Without shared_preload_libraries there is nothing to set up:
 * PostgreSQL refuses restart-only settings from a library loaded later, and
 * every function then refuses to run (shmem_require()).  Neither is anything
 * set up in binary-upgrade mode (pg_upgrade), where no ID may be issued and
 * no worker may run: the high-water mark is handed over instead, and a
 * uidgen loaded later than at start-up refuses to load (replicas/upgrade.c).
 *
 * Shared memory is set up in the order registered here (core/shmem.c):
 * the clocks, then the copy state, then the state file, whose set-up
 * starts the clocks and hands the copy state what it found.
 */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
	{
		if (IsBinaryUpgrade)
			upgrade_refuse_late_load();
		return;
	}

	settings_define();
	CRASH_POINTS_INIT();
	/* WAL may hold uidgen's records whenever the server replays it */
	walmark_register(copies_replay_mark);

	if (IsBinaryUpgrade)
	{
		upgrade_hand_over();
		return;
	}
	clock_register();
	copies_register();
	statefile_register();
	lease_register();
	counters_register();
	keeper_register();
	leaseworker_register();
	blocks_register();
	citusblocks_register();
}
