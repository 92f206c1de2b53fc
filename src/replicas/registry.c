/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The registry's side of worker id leases: a libpq connection from the
 *	  lease worker to the database named by uidgen.worker_id_registry, and
 *	  the statements it runs there on the table uidgen_worker_leases.
 *
 * Every call is bounded: connecting, and then each statement, by a deadline
 * of "timeout_ms" kept on this side, waiting on the socket and the
 * process's latch (so that SIGTERM and postmaster death are noticed at
 * once), and on the registry by statement_timeout and lock_timeout.  A
 * failure closes the connection; the next call connects again.  The
 * session commits with synchronous_commit on, whatever the registry's
 * default, as a lease must outlive a crash of the registry before it is
 * used.  Expiry is decided by the registry's clock (now()) alone.
 *
 * No host name is ever looked up: libpq resolves one with a blocking
 * getaddrinfo() inside PQconnectStartParams() (and inside PQconnectPoll()
 * when it moves on to the next host of a list), and neither its
 * connect_timeout nor our deadline bounds that call, so a slow DNS server
 * would hold the lease worker, deaf to renewals and to SIGTERM, for as long
 * as the lookup takes.  So each host must be a socket directory, a numeric
 * address, or come with its address in hostaddr (registry_names_host());
 * a connection string that would make libpq look a name up fails at once.
 *
 * Only the lease worker (leaseworker.c) calls this module; its state is that
 * process's own, without shared memory or locks.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <netdb.h>

#include "libpq-fe.h"
#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"

#include "clock/clock.h"
#include "core/compat.h"
#include "replicas/registry.h"
#include "core/settings.h"

/* The table, as the lease worker creates it when it is missing. */
#define REGISTRY_DDL \
	"CREATE TABLE IF NOT EXISTS uidgen_worker_leases (" \
	" worker_id integer PRIMARY KEY," \
	" holder text NOT NULL," \
	" expires_at timestamptz NOT NULL," \
	" id_bound bigint NOT NULL)"

/*
 * Take a worker id: the one the registry still names this server for, or
 * else one never used, or else the expired one with the lowest bound.  The
 * bound is left as it is: the caller moves its clocks above it, then
 * reports its own bound by renewing.  No row comes back when another
 * server took the chosen id first (or none is free).
 */
#define REGISTRY_CLAIM \
	"WITH candidate AS (" \
	"  SELECT g.id AS worker_id, 1 AS rank, 0::bigint AS bound" \
	"  FROM (SELECT 0 AS id UNION" \
	"        SELECT worker_id + 1 FROM uidgen_worker_leases" \
	"        WHERE worker_id >= 0 AND worker_id < $3::integer) AS g" \
	"  WHERE NOT EXISTS (SELECT FROM uidgen_worker_leases m WHERE m.worker_id = g.id)" \
	" UNION ALL" \
	"  SELECT worker_id, CASE WHEN holder = $1 THEN 0 ELSE 1 END, id_bound" \
	"  FROM uidgen_worker_leases" \
	"  WHERE worker_id BETWEEN 0 AND $3::integer AND (holder = $1 OR expires_at <= now())" \
	"  ORDER BY rank, bound, worker_id LIMIT 1)" \
	" INSERT INTO uidgen_worker_leases AS l (worker_id, holder, expires_at, id_bound)" \
	" SELECT worker_id, $1, now() + $2::bigint * interval '1 millisecond', 0 FROM candidate" \
	" ON CONFLICT (worker_id) DO UPDATE" \
	"  SET holder = excluded.holder, expires_at = excluded.expires_at" \
	"  WHERE l.holder = excluded.holder OR l.expires_at <= now()" \
	" RETURNING worker_id, id_bound"

/* Extend our lease and raise its bound; the current holder, for messages. */
#define REGISTRY_RENEW \
	"WITH renewed AS (" \
	"  UPDATE uidgen_worker_leases" \
	"  SET expires_at = now() + $3::bigint * interval '1 millisecond'," \
	"      id_bound = greatest(id_bound, $4::bigint)" \
	"  WHERE worker_id = $1::integer AND holder = $2" \
	"  RETURNING id_bound)" \
	" SELECT (SELECT id_bound FROM renewed)," \
	"  (SELECT holder FROM uidgen_worker_leases WHERE worker_id = $1::integer)"

/* Free our worker id at once, recording the last tick issued under it. */
#define REGISTRY_RELEASE \
	"UPDATE uidgen_worker_leases SET expires_at = now(), id_bound = $3::bigint" \
	" WHERE worker_id = $1::integer AND holder = $2"

static PGconn *conn = NULL;
static char last_error[256] = "";
static bool interruptible = true;
static uint32 we_registry = 0;

/* Remember why the registry failed, and drop the connection. */
static void
registry_fail(const char *what, const char *why)
{
	char	   *nl;

	snprintf(last_error, sizeof(last_error), "%s: %s", what, why ? why : "");
	/* libpq's messages end in a newline and may go on: keep the first line */
	if ((nl = strchr(last_error, '\n')) != NULL)
		*nl = '\0';
	if (conn != NULL)
		PQfinish(conn);
	conn = NULL;
}

/* Wait until the socket is ready for "events"; false past the deadline. */
static bool
registry_wait(int events, uint64 deadline, const char *what)
{
	for (;;)
	{
		uint64		now = clock_monotonic_ticks();
		int			rc;

		if (interruptible && ShutdownRequestPending)
		{
			registry_fail(what, "the server is shutting down");
			return false;
		}
		if (now >= deadline)
		{
			registry_fail(what, "timed out");
			return false;
		}
		if (PQsocket(conn) == PGINVALID_SOCKET)
		{
			registry_fail(what, PQerrorMessage(conn));
			return false;
		}
		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
							   PQsocket(conn),
							   (long) UIDGEN_TICKS_TO_MS(deadline - now) + 1,
							   uidgen_wait_event(&we_registry, "UidgenLeaseRegistry"));
		if (rc & WL_LATCH_SET)
			ResetLatch(MyLatch);
		if (rc & events)
			return true;
	}
}

/* Run "sql" and wait for its results; the last one, or NULL on failure. */
static PGresult *
registry_exec(const char *sql, int nparams, const char *const *params,
			  int timeout_ms, const char *what)
{
	uint64		deadline = clock_monotonic_ticks() + UIDGEN_MS_TO_TICKS(timeout_ms);
	PGresult   *last = NULL;
	PGresult   *res;
	bool		sent;

	sent = nparams > 0 ?
		PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0) :
		PQsendQuery(conn, sql);
	if (!sent)
	{
		registry_fail(what, PQerrorMessage(conn));
		return NULL;
	}
	for (;;)
	{
		while (PQisBusy(conn))
		{
			if (!registry_wait(WL_SOCKET_READABLE, deadline, what))
			{
				PQclear(last);
				return NULL;
			}
			if (!PQconsumeInput(conn))
			{
				PQclear(last);
				registry_fail(what, PQerrorMessage(conn));
				return NULL;
			}
		}
		if ((res = PQgetResult(conn)) == NULL)
			break;
		if (PQresultStatus(res) != PGRES_COMMAND_OK &&
			PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			registry_fail(what, PQresultErrorMessage(res));
			PQclear(res);
			PQclear(last);
			return NULL;
		}
		PQclear(last);
		last = res;
	}
	return last;
}

/*
 * Set the session up: bounded statements, durable commits; create the
 * table if it is missing (a role that may not create it can still use one
 * an operator made).
 */
static bool
registry_prepare(int timeout_ms)
{
	char	   *setup;
	PGresult   *res;
	bool		missing;

	setup = psprintf("SET statement_timeout = %d; SET lock_timeout = %d;"
					 " SET synchronous_commit = on;"
					 " SET idle_in_transaction_session_timeout = %d;"
					 " SELECT to_regclass('uidgen_worker_leases') IS NULL",
					 timeout_ms, timeout_ms, timeout_ms);
	res = registry_exec(setup, 0, NULL, timeout_ms, "could not set up the registry session");
	pfree(setup);
	if (res == NULL)
		return false;
	missing = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (missing &&
		(res = registry_exec(REGISTRY_DDL, 0, NULL, timeout_ms,
							 "could not create table uidgen_worker_leases")) == NULL)
		return false;
	if (missing)
		PQclear(res);
	return true;
}

/*
 * A connection option's value, or NULL if it is empty or not set.  Set in
 * the setting, even to '', it hides its environment variable, as libpq
 * fills only the options the string leaves out from the environment
 * (hostaddr='' with PGHOSTADDR set: libpq looks the host name up).
 */
static const char *
registry_option(const PQconninfoOption *opts, const char *keyword, const char *env)
{
	for (const PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, keyword) == 0 && o->val != NULL)
			return o->val[0] != '\0' ? o->val : NULL;
	return getenv(env) != NULL && getenv(env)[0] != '\0' ? getenv(env) : NULL;
}

/* Would libpq look this host (one of a list, hostaddr empty) up by name? */
static bool
registry_is_name(const char *host)
{
	struct addrinfo hints;
	struct addrinfo *ai;

	if (host[0] == '\0' || is_absolute_path(host) || host[0] == '@')
		return false;
	/* AI_NUMERICHOST parses an address and never looks anything up */
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST;
	hints.ai_family = AF_UNSPEC;
	if (getaddrinfo(host, NULL, &hints, &ai) != 0)
		return true;
	freeaddrinfo(ai);
	return false;
}

/*
 * Why connecting with "conninfo" would make libpq look a host name up (or
 * could: a service file's), or NULL if it would not.  The environment's
 * PGHOST, PGHOSTADDR and PGSERVICE count as libpq's defaults do.
 */
static char *
registry_names_host(const char *conninfo)
{
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	const char *hosts;
	const char *addrs;
	char	   *why = NULL;

	/*
	 * A bare database name (no "=", no URI prefix) is no connection string
	 * to PQconninfoParse(), but libpq connects with it as dbname, taking
	 * the host from its defaults: judge those.
	 */
	if (opts == NULL && strchr(conninfo, '=') == NULL &&
		strncmp(conninfo, "postgresql://", 13) != 0 &&
		strncmp(conninfo, "postgres://", 11) != 0)
		opts = PQconninfoParse("", NULL);
	if (opts == NULL)
		return NULL;			/* libpq reports the syntax error */
	hosts = registry_option(opts, "host", "PGHOST");
	addrs = registry_option(opts, "hostaddr", "PGHOSTADDR");
	if (registry_option(opts, "service", "PGSERVICE") != NULL)
		why = pstrdup("a connection service may name a host, whose lookup would not be bounded by the deadline");
	while (why == NULL && hosts != NULL)
	{
		size_t		hlen = strcspn(hosts, ",");
		size_t		alen = addrs != NULL ? strcspn(addrs, ",") : 0;
		char	   *host = pnstrdup(hosts, hlen);

		if (alen == 0 && registry_is_name(host))
			why = psprintf("host name \"%s\" would be looked up without a time limit; give its address in hostaddr", host);
		hosts = hosts[hlen] == ',' ? hosts + hlen + 1 : NULL;
		addrs = addrs != NULL && addrs[alen] == ',' ? addrs + alen + 1 : NULL;
	}
	PQconninfoFree(opts);
	return why;
}

/* Connect to the registry, unless connected; false on failure. */
static bool
registry_connect(int timeout_ms)
{
	const char *what = "could not connect to the registry";
	uint64		deadline = clock_monotonic_ticks() + UIDGEN_MS_TO_TICKS(timeout_ms);
	char		seconds[16];
	const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
	const char *values[] = {seconds, "uidgen lease", uidgen_worker_id_registry, NULL};
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	char	   *why;

	if (conn != NULL && PQstatus(conn) == CONNECTION_OK)
		return true;
	if (conn != NULL)
		registry_fail(what, "the connection was lost");
	/* PQconnectStartParams() would block in getaddrinfo(): see the top */
	if ((why = registry_names_host(uidgen_worker_id_registry)) != NULL)
	{
		registry_fail(what, why);
		return false;
	}
	/* libpq counts whole seconds, at least 2; our own deadline is the bound */
	snprintf(seconds, sizeof(seconds), "%d", Max(2, (timeout_ms + 999) / 1000));
	conn = PQconnectStartParams(keys, values, 1);
	if (conn == NULL)
	{
		registry_fail(what, "out of memory");
		return false;
	}
	while (st != PGRES_POLLING_OK)
	{
		if (st == PGRES_POLLING_FAILED || PQstatus(conn) == CONNECTION_BAD)
		{
			registry_fail(what, PQerrorMessage(conn));
			return false;
		}
		if (!registry_wait(st == PGRES_POLLING_READING ? WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE,
						   deadline, what))
			return false;
		st = PQconnectPoll(conn);
	}
	return registry_prepare(timeout_ms);
}

/* A bigint column of the registry as ticks (never negative). */
static uint64
registry_ticks(const PGresult *res, int col)
{
	long long	v = strtoll(PQgetvalue(res, 0, col), NULL, 10);

	return v > 0 ? (uint64) v : 0;
}

/*
 * Claim a worker id from 0 to max_worker for "holder", for lease_ms: its
 * id and the bound the registry held for it (every ID issued with it so
 * far is at or below that tick).  REGISTRY_NONE if none was free or
 * another server took the chosen one first.
 */
RegistryOutcome
registry_claim(const char *holder, int lease_ms, int32 max_worker,
			   int timeout_ms, int32 *worker, uint64 *floor)
{
	char		lease[16];
	char		max[16];
	const char *params[] = {holder, lease, max};
	PGresult   *res;
	RegistryOutcome outcome = REGISTRY_NONE;

	if (!registry_connect(timeout_ms))
		return REGISTRY_FAILED;
	snprintf(lease, sizeof(lease), "%d", lease_ms);
	snprintf(max, sizeof(max), "%d", max_worker);
	res = registry_exec(REGISTRY_CLAIM, 3, params, timeout_ms, "could not claim a worker id");
	if (res == NULL)
		return REGISTRY_FAILED;
	if (PQntuples(res) == 1)
	{
		*worker = atoi(PQgetvalue(res, 0, 0));
		*floor = registry_ticks(res, 1);
		outcome = REGISTRY_OK;
	}
	PQclear(res);
	return outcome;
}

/*
 * Renew the lease of "holder" on "worker" for lease_ms from the registry's
 * now, raising its bound to at least "bound": the bound the registry holds
 * now.  REGISTRY_NONE if the registry no longer names "holder" for it; then
 * current_holder is who it names, or "".
 */
RegistryOutcome
registry_renew(int32 worker, const char *holder, int lease_ms, uint64 bound,
			   int timeout_ms, uint64 *confirmed, char *current_holder,
			   size_t holder_len)
{
	char		id[16];
	char		lease[16];
	char		ticks[24];
	const char *params[] = {id, holder, lease, ticks};
	PGresult   *res;
	RegistryOutcome outcome = REGISTRY_NONE;

	if (!registry_connect(timeout_ms))
		return REGISTRY_FAILED;
	snprintf(id, sizeof(id), "%d", worker);
	snprintf(lease, sizeof(lease), "%d", lease_ms);
	snprintf(ticks, sizeof(ticks), UINT64_FORMAT, bound);
	res = registry_exec(REGISTRY_RENEW, 4, params, timeout_ms, "could not renew the lease");
	if (res == NULL)
		return REGISTRY_FAILED;
	strlcpy(current_holder, PQntuples(res) == 1 ? PQgetvalue(res, 0, 1) : "", holder_len);
	if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
	{
		*confirmed = registry_ticks(res, 0);
		outcome = REGISTRY_OK;
	}
	PQclear(res);
	return outcome;
}

/*
 * Release the lease of "holder" on "worker" at shutdown, recording "bound",
 * the last tick this server handed out, as the worker id's bound.  Runs
 * while a shutdown is pending, so only the deadline cuts it short.
 */
RegistryOutcome
registry_release(int32 worker, const char *holder, uint64 bound, int timeout_ms)
{
	char		id[16];
	char		ticks[24];
	const char *params[] = {id, holder, ticks};
	PGresult   *res;
	RegistryOutcome outcome;

	interruptible = false;
	snprintf(id, sizeof(id), "%d", worker);
	snprintf(ticks, sizeof(ticks), UINT64_FORMAT, bound);
	if (!registry_connect(timeout_ms))
		outcome = REGISTRY_FAILED;
	else if ((res = registry_exec(REGISTRY_RELEASE, 3, params, timeout_ms,
								  "could not release the lease")) == NULL)
		outcome = REGISTRY_FAILED;
	else
	{
		outcome = strcmp(PQcmdTuples(res), "1") == 0 ? REGISTRY_OK : REGISTRY_NONE;
		PQclear(res);
	}
	interruptible = true;
	return outcome;
}

/* Why the last call failed, for messages. */
const char *
registry_last_error(void)
{
	return last_error;
}
