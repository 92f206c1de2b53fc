/*-------------------------------------------------------------------------
 *
 * crashpoint.c
 *	  Crash points for tests (built only with UIDGEN_CRASH_POINTS=1).
 *
 * uidgen.crash_point names one point (superuser; in postgresql.conf for
 * the postmaster, the startup process and the background workers, or with
 * SET for one session).  A process that reaches it does what
 * uidgen.crash_action says:
 *	- kill: SIGKILL itself, as kill -9 would: nothing more runs, no exit
 *	  callback, and the postmaster restarts the cluster after a backend or
 *	  worker dies (the default);
 *	- wait: log "uidgen crash point "NAME" reached" and wait until the file
 *	  uidgen.crash_release exists in the data directory, then go on;
 *	- error: raise an ERROR there.
 * Every process that reaches the point acts; the point stays armed.
 *
 * On a gcov build (scripts/test.sh UIDGEN_COVERAGE=1 adds -DUIDGEN_GCOV) a
 * process about to kill itself first writes its gcov counts, which a
 * SIGKILL would lose: what it ran before the crash point counts too.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <unistd.h>

#include "miscadmin.h"
#include "core/crashpoint.h"
#include "core/settings.h"

#define CRASH_RELEASE_FILE "uidgen.crash_release"

#ifdef UIDGEN_GCOV
/* libgcov's (linked in by --coverage): write this process's counts now */
extern void __gcov_dump(void);
#endif

/* A process reached crash point "name": act if it is the armed one. */
void
crashpoint_reach(const char *name)
{
	if (uidgen_crash_point == NULL || strcmp(uidgen_crash_point, name) != 0)
		return;
	ereport(LOG,
			(errmsg("uidgen crash point \"%s\" reached", name)));
	switch ((UidgenCrashAction) uidgen_crash_action)
	{
		case UIDGEN_CRASH_KILL:
#ifdef UIDGEN_GCOV
			__gcov_dump();
#endif
			(void) kill(getpid(), SIGKILL);
			for (;;)
				pause();
		case UIDGEN_CRASH_WAIT:
			/* interrupts too: a promotion waits for every backend's barrier */
			while (access(CRASH_RELEASE_FILE, F_OK) != 0)
			{
				CHECK_FOR_INTERRUPTS();
				pg_usleep(10000L);
			}
			ereport(LOG,
					(errmsg("uidgen crash point \"%s\" released", name)));
			break;
		case UIDGEN_CRASH_ERROR:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("uidgen crash point \"%s\"", name)));
	}
}
